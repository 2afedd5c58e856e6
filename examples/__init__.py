"""Examples (source tree only, not installed): a model zoo (`examples.models`). The `d2s demo`
walkthrough ships inside the package as `d2s.demo`."""
