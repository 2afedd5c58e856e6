"""A Paddle 2.x high-level-API training script, ported by changing its imports only: LeNet on
scikit-learn's 8x8 digits (the data `d2s demo` uses) with `paddle.summary`, `paddle.Model`
converted by `to_static` through `inputs`, `paddle.metric.Accuracy`, `EarlyStopping` and
`ModelCheckpoint`, then `evaluate`, `predict`, `save` and `load`.

The script between the import block and the tests is Paddle code as its users write it; the
only edits are the four imports (the Paddle originals are in the comments)."""
import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.datasets import load_digits

import runtime as paddle  # import paddle
from d2s import to_static  # from paddle.jit import to_static
from runtime import nn  # from paddle import nn
from runtime.static import InputSpec  # from paddle.static import InputSpec


# ---- the script ------------------------------------------------------------------------------
class DigitsDataset(paddle.io.Dataset):
    def __init__(self, mode="train"):
        super().__init__()
        digits = load_digits()
        images = (digits.images / 16.0).astype("float32")[:, np.newaxis, :, :]
        labels = digits.target.astype("int64")[:, np.newaxis]
        order = np.random.RandomState(0).permutation(len(labels))
        split = int(len(labels) * 0.8)
        keep = order[:split] if mode == "train" else order[split:]
        self.images, self.labels = images[keep], labels[keep]

    def __getitem__(self, idx):
        return self.images[idx], self.labels[idx]

    def __len__(self):
        return len(self.labels)


class LeNet(nn.Layer):
    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2D(1, 6, 3, stride=1, padding=1), nn.ReLU(), nn.MaxPool2D(2, 2),
            nn.Conv2D(6, 16, 3, stride=1, padding=1), nn.ReLU(), nn.MaxPool2D(2, 2))
        self.fc = nn.Sequential(nn.Linear(16 * 2 * 2, 64), nn.ReLU(), nn.Linear(64, num_classes))

    def forward(self, inputs):
        x = self.features(inputs)
        x = paddle.flatten(x, 1)
        return self.fc(x)


def train(epochs, save_dir, patience=2):
    paddle.seed(2023)
    train_dataset, test_dataset = DigitsDataset("train"), DigitsDataset("test")
    net = LeNet()
    params_info = paddle.summary(net, (1, 1, 8, 8))

    inputs = [InputSpec([None, 1, 8, 8], "float32", "image")]
    labels = [InputSpec([None, 1], "int64", "label")]
    model = paddle.Model(to_static(net, input_spec=inputs), inputs, labels)
    optim = paddle.optimizer.Adam(learning_rate=0.005, parameters=model.parameters())
    model.prepare(optim, nn.CrossEntropyLoss(), paddle.metric.Accuracy(topk=(1, 2)))

    early_stop = paddle.callbacks.EarlyStopping(
        "acc_top1", mode="max", patience=patience, verbose=1, min_delta=0, baseline=None,
        save_best_model=True)
    model.fit(train_dataset, test_dataset, epochs=epochs, batch_size=64, save_dir=save_dir,
              verbose=1, callbacks=[early_stop])
    result = model.evaluate(test_dataset, batch_size=64, verbose=0)
    predictions = model.predict(test_dataset, batch_size=128, stack_outputs=True, verbose=0)
    return model, params_info, result, predictions, test_dataset


def reload(save_dir, name):
    model = paddle.Model(LeNet())
    model.prepare(metrics=paddle.metric.Accuracy())
    model.load(f"{save_dir}/{name}")
    return model
# ---- end of the script ------------------------------------------------------------------------


LENET_PARAMS = (6 * 9 + 6) + (16 * 6 * 9 + 16) + (64 * 64 + 64) + (64 * 10 + 10)


def check_training(tmp_path, epochs, threshold, capsys):
    model, info, result, predictions, test = train(epochs, str(tmp_path))
    out = capsys.readouterr().out
    assert info == {"total_params": LENET_PARAMS, "trainable_params": LENET_PARAMS}
    assert f"Total params: {LENET_PARAMS:,}" in out
    # to_static through `inputs`: the forward is converted and kept one program per mode.
    assert getattr(model.network.forward, "__d2s_static_function__", False)
    assert len(model.network.forward.program_cache) <= 2, "retraced per batch"
    assert "Epoch 1/" in out and "Eval samples: 360" in out
    assert set(result) == {"loss", "acc_top1", "acc_top2"}
    assert result["acc_top1"] > threshold and result["acc_top2"] >= result["acc_top1"]
    # predict agrees with evaluate's accuracy (NumPy reference on the stacked logits)
    logits = predictions[0]
    assert logits.shape == (len(test), 10)
    acc = float((logits.argmax(1) == test.labels[:, 0]).mean())
    assert abs(acc - result["acc_top1"]) < 1e-6
    return model, result, logits, out


def test_one_epoch_port_runs_and_learns(tmp_path, capsys):
    _, _, logits, _ = check_training(tmp_path, 1, 0.5, capsys)
    # ModelCheckpoint (added by fit for save_dir) wrote epoch 0 and final; reloading final
    # into a fresh eager LeNet predicts the same logits.
    assert (tmp_path / "0.pdparams").exists() and (tmp_path / "final.pdopt").exists()
    again = reload(str(tmp_path), "final")
    images = paddle.to_tensor(DigitsDataset("test").images)
    np.testing.assert_allclose(again.predict_batch([images])[0], logits, rtol=1e-5, atol=1e-5)


@pytest.mark.slow  # about 10 s: trains until early stopping
def test_port_trains_to_high_accuracy_and_stops_early(tmp_path, capsys):
    _, result, _, out = check_training(tmp_path, 40, 0.93, capsys)
    assert "Early stopping." in out, out[-2000:]
    best = reload(str(tmp_path), "best_model")
    assert best.evaluate(DigitsDataset("test"), batch_size=64, verbose=0)["acc"] \
        >= result["acc_top1"] - 1e-6
