"""Examples: a model zoo (`examples.models`) and the `d2s demo` walkthrough (`examples.demo`)."""
