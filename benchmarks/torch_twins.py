"""The PyTorch side of `benchmarks/model_table.py`: PyTorch twins of the zoo models and the two
blocks (same layers, sizes and inputs; not the same weights), timed eager and under
`torch.compile`. Runs in an interpreter that has torch (a separate environment: torch is no
dependency of d2s) and prints one `ROW {json}` line per (case, task), as the d2s side does.

    /tmp/torchvenv/bin/python benchmarks/torch_twins.py --threads 1 [--quick] [--compile all]

Seq2Seq has no twin here (its cells stay "-").
"""
from __future__ import annotations

import argparse
import itertools
import os
import sys

import torch
from torch import nn
from torch.nn import functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_table_cases as spec


class BasicBlock(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.shortcut = None

    def forward(self, x):
        out = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        return F.relu(out + (x if self.shortcut is None else self.shortcut(x)))


def project(block: BasicBlock, in_channels: int, stride: int) -> BasicBlock:
    """`block` turned into the zoo ResNet's downsampling block (stride, projection)."""
    out = block.conv1.out_channels
    block.conv1 = nn.Conv2d(in_channels, out, 3, stride=stride, padding=1, bias=False)
    block.shortcut = nn.Sequential(nn.Conv2d(in_channels, out, 1, stride=stride, bias=False),
                                   nn.BatchNorm2d(out))
    return block


class ResNet(nn.Module):
    def __init__(self, widths=(8, 16), blocks_per_stage=2):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 3, padding=1, bias=False),
                                  nn.BatchNorm2d(widths[0]), nn.ReLU())
        blocks, channels = [], widths[0]
        for stage, width in enumerate(widths):
            for i in range(blocks_per_stage):
                stride = 2 if stage > 0 and i == 0 else 1
                block = BasicBlock(width)
                blocks.append(project(block, channels, stride)
                              if stride != 1 or channels != width else block)
                channels = width
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(channels, 10)

    def forward(self, x):
        return self.fc(self.blocks(self.stem(x)).mean(dim=(2, 3)))


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.conv2 = nn.Conv2d(1, 6, 3, padding=1), nn.Conv2d(6, 16, 5)
        self.fc1, self.fc2, self.fc3 = nn.Linear(400, 120), nn.Linear(120, 84), nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2).flatten(1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


def separable(c_in: int, c_out: int, stride: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(c_in, c_in, 3, stride=stride, padding=1, groups=c_in, bias=False),
        nn.BatchNorm2d(c_in), nn.ReLU6(), nn.Conv2d(c_in, c_out, 1, bias=False),
        nn.BatchNorm2d(c_out), nn.ReLU6())


class MobileNet(nn.Module):
    def __init__(self, config=((16, 1), (32, 2), (32, 1), (64, 2)), width=0.5):
        super().__init__()
        channels = max(4, int(16 * width))
        layers = [nn.Conv2d(3, channels, 3, stride=2, padding=1, bias=False),
                  nn.BatchNorm2d(channels), nn.ReLU6()]
        for out, stride in config:
            out = max(4, int(out * width))
            layers.append(separable(channels, out, stride))
            channels = out
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(channels, 10)

    def forward(self, x):
        return self.fc(self.features(x).mean(dim=(2, 3)))


class LSTMLanguageModel(nn.Module):
    def __init__(self, vocab=50, hidden=32):
        super().__init__()
        self.embedding = nn.Embedding(vocab, hidden)
        self.lstm = nn.LSTM(hidden, hidden, num_layers=2, batch_first=True)
        self.bias = nn.Parameter(torch.zeros(vocab))

    def forward(self, tokens):
        out, states = self.lstm(self.embedding(tokens))
        return out @ self.embedding.weight.T + self.bias, states


class BertClassifier(nn.Module):
    def __init__(self, vocab=60, d_model=32, heads=4, layers=2, max_len=32):
        super().__init__()
        self.token, self.position = nn.Embedding(vocab, d_model), nn.Embedding(max_len, d_model)
        self.norm = nn.LayerNorm(d_model)
        layer = nn.TransformerEncoderLayer(d_model, heads, 2 * d_model, dropout=0.0,
                                           activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.pooler, self.classifier = nn.Linear(d_model, d_model), nn.Linear(d_model, 2)

    def forward(self, tokens):
        positions = torch.arange(tokens.shape[1])
        x = self.norm(self.token(tokens) + self.position(positions))
        x = self.encoder(x, src_key_padding_mask=tokens == 0)
        return self.classifier(torch.tanh(self.pooler(x[:, 0])))


class DeepFM(nn.Module):
    def __init__(self, field_sizes=(10, 8, 6, 4), embed=8, dense=3, hidden=(32, 16)):
        super().__init__()
        offsets = torch.tensor([0] + list(field_sizes[:-1])).cumsum(0)
        self.register_buffer("offsets", offsets)
        self.embedding = nn.Embedding(sum(field_sizes), embed)
        self.first_order = nn.Embedding(sum(field_sizes), 1)
        self.bias = nn.Parameter(torch.zeros(1))
        self.dense_first_order = nn.Linear(dense, 1, bias=False)
        widths = [len(field_sizes) * embed + dense] + list(hidden)
        self.mlp = nn.ModuleList(nn.Linear(a, b) for a, b in itertools.pairwise(widths))
        self.out = nn.Linear(widths[-1], 1)

    def forward(self, sparse, dense):
        ids = sparse + self.offsets
        emb = self.embedding(ids)
        linear = self.first_order(ids).sum(dim=(1, 2)) + self.bias
        linear = linear + self.dense_first_order(dense).squeeze(-1)
        fm = 0.5 * (emb.sum(1).square() - emb.square().sum(1)).sum(1)
        deep = torch.cat([emb.flatten(1), dense], dim=1)
        for layer in self.mlp:
            deep = F.relu(layer(deep))
        return linear + fm + self.out(deep).squeeze(-1)


class SpeechClassifier(nn.Module):
    def __init__(self, features=8, channels=(16, 16), hidden=16, classes=6):
        super().__init__()
        layers, width = [], features
        for c in channels:
            layers += [nn.Conv1d(width, c, 3, stride=2, padding=1), nn.BatchNorm1d(c), nn.ReLU()]
            width = c
        self.convs = nn.Sequential(*layers)
        self.gru = nn.GRU(width, hidden, batch_first=True)
        self.classifier = nn.Linear(hidden, classes)

    def forward(self, features, lengths):
        x = self.convs(features.transpose(1, 2)).transpose(1, 2)
        for _ in range(len(self.convs) // 3):
            lengths = (lengths + 2 - 3) // 2 + 1
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True,
                                                   enforce_sorted=False)
        out, _ = nn.utils.rnn.pad_packed_sequence(self.gru(packed)[0], batch_first=True,
                                                  total_length=x.shape[1])
        valid = (torch.arange(x.shape[1])[None] < lengths[:, None]).to(out.dtype)
        pooled = (out * valid[..., None]).sum(1) / lengths[:, None].to(out.dtype)
        return self.classifier(pooled)


def twins(quick: bool) -> dict:
    """{case name: a function making the PyTorch twin}."""
    channels = 4 if quick else 16
    d_model, heads, ffn = (16, 2, 32) if quick else (256, 4, 1024)
    return {
        "ResNet basic block": lambda: BasicBlock(channels),
        "Transformer encoder layer": lambda: nn.TransformerEncoderLayer(
            d_model, heads, ffn, dropout=0.0, batch_first=True),
        "LeNet 28x28": LeNet, "ResNet (2 stages x 2 blocks)": ResNet,
        "MobileNet (width 0.5)": MobileNet, "LSTM LM (T=20)": LSTMLanguageModel,
        "BERT classifier (T=16)": BertClassifier, "DeepFM": DeepFM,
        "Speech Conv1D+GRU (T=40)": SpeechClassifier,
    }


def loss_of(kind: str, out, labels):
    if kind == "mean":
        return out.mean()
    if kind == "bce":
        return F.binary_cross_entropy_with_logits(out, labels)
    logits = out[0] if kind == "ce_first" else out
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))


def calls(case: dict, model: nn.Module, task: str, inputs, labels, compile_too: bool) -> dict:
    """{column: call}: the model eager and, with `compile_too`, under torch.compile."""
    forwards = {"torch": model}
    if compile_too:
        forwards["torch_compile"] = torch.compile(model)
    if task == "infer":
        model.eval()

        def inference(forward):
            def call():
                with torch.no_grad():
                    return forward(*inputs)
            return call
        return {column: inference(f) for column, f in forwards.items()}
    opt = torch.optim.SGD(model.parameters(), lr=0.001)

    def train_step(forward):
        def step():
            loss = loss_of(case["loss"], forward(*inputs), labels)
            loss.backward()
            opt.step()
            opt.zero_grad()
            return loss
        return step
    return {column: train_step(f) for column, f in forwards.items()}


def compiles(name: str, prefixes: list[str]) -> bool:
    return prefixes == ["all"] or any(name.startswith(p) for p in prefixes if p != "none")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--only", default="")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--target", type=float, default=0.2)
    parser.add_argument("--compile", default="none",
                        help="cases also timed under torch.compile: name prefixes, 'all', 'none'")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    prefixes = [s.strip() for s in args.only.split(",") if s.strip()]
    compiled = [s.strip() for s in args.compile.split(",") if s.strip()]
    makers = twins(args.quick)
    for case in spec.CASES:
        if case["name"] not in makers or (prefixes and not any(
                case["name"].startswith(p) for p in prefixes)):
            continue
        for task, batch in spec.tasks(case, args.quick):
            arrays, labels = spec.make_arrays(case, batch, args.quick)
            inputs = [torch.from_numpy(a) for a in arrays]
            labels = None if labels is None else torch.from_numpy(labels)
            torch.manual_seed(0)
            row = {"name": case["name"], "task": task, "batch": batch}
            for column, call in calls(case, makers[case["name"]](), task, inputs, labels,
                                      compiles(case["name"], compiled)).items():
                row[column] = spec.best_ms(call, args.repeat, args.target,
                                           spec.clock_for(args.threads))
            spec.emit(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
