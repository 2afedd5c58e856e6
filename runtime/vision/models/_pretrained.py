"""The one answer to `pretrained=True`: there are no weights to download."""
from __future__ import annotations


def refuse_pretrained(model: str, pretrained: bool) -> None:
    """Raise where Paddle would download ImageNet weights: this runtime has no model hub."""
    if pretrained:
        raise ValueError(
            f"{model}(pretrained=True): runtime has no pretrained weights and downloads nothing. "
            f"Build {model}(pretrained=False) and load weights you have with "
            "`model.set_state_dict(rt.load(path))`.")
