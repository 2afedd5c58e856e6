"""BMN (boundary-matching network for temporal action proposals: Conv1D base, start/end
heads, a boundary-matching layer as a matmul with a fixed sampling mask, Conv3D over the
sample axis, Conv2D confidence maps) and CycleGAN (two ResNet generators with InstanceNorm and
Conv2DTranspose, two PatchGAN discriminators, adversarial + cycle + identity losses), small
sizes, written as Paddle users write them. See harness.py for what is checked."""
import numpy as np

import runtime as rt
import runtime.nn as nn
import runtime.nn.functional as F

from .harness import check_family

# ---- BMN ------------------------------------------------------------------------------------

T, D, N_SAMPLE, FEAT = 8, 4, 3, 6  # temporal length, max duration, points per proposal


def sample_mask():
    """[T, N_SAMPLE * D * T]: column (n, d, s) averages the features around point n of the
    proposal that starts at s and lasts d + 1 steps (linear interpolation)."""
    mask = np.zeros((T, N_SAMPLE, D, T), "float32")
    for s in range(T):
        for d in range(D):
            end = s + d + 1
            if end > T:
                continue
            for n in range(N_SAMPLE):
                pos = s + (end - s) * (n + 0.5) / N_SAMPLE - 0.5
                lo = int(np.floor(pos))
                frac = pos - lo
                for idx, w in ((lo, 1 - frac), (lo + 1, frac)):
                    if 0 <= idx < T:
                        mask[idx, n, d, s] += w
    return mask.reshape(T, -1)


class BMN(nn.Layer):
    def __init__(self, hid=8):
        super().__init__()
        self.base = nn.Sequential(nn.Conv1D(FEAT, hid, 3, padding=1, groups=2), nn.ReLU(),
                                  nn.Conv1D(hid, hid, 3, padding=1, groups=2), nn.ReLU())
        self.start = nn.Sequential(nn.Conv1D(hid, hid, 3, padding=1), nn.ReLU(),
                                   nn.Conv1D(hid, 1, 1))
        self.end = nn.Sequential(nn.Conv1D(hid, hid, 3, padding=1), nn.ReLU(),
                                 nn.Conv1D(hid, 1, 1))
        self.p_conv = nn.Conv1D(hid, hid, 3, padding=1)
        self.register_buffer("mask", rt.to_tensor(sample_mask()))
        self.p_conv3d = nn.Conv3D(hid, hid, (N_SAMPLE, 1, 1), stride=(N_SAMPLE, 1, 1))
        self.p_conv2d = nn.Sequential(nn.Conv2D(hid, hid, 1), nn.ReLU(),
                                      nn.Conv2D(hid, hid, 3, padding=1), nn.ReLU(),
                                      nn.Conv2D(hid, 2, 1), nn.Sigmoid())

    def forward(self, x):
        base = self.base(x)
        start = F.sigmoid(self.start(base)).squeeze(1)
        end = F.sigmoid(self.end(base)).squeeze(1)
        feat = F.relu(self.p_conv(base))
        bm = rt.matmul(feat, self.mask)  # [N, C, N_SAMPLE * D * T]
        bm = rt.reshape(bm, [0, 0, N_SAMPLE, D, T])
        conf = self.p_conv2d(F.relu(self.p_conv3d(bm)).squeeze(2))  # [N, 2, D, T]
        return conf, start, end


def bmn_batch(rng, n):
    return (rng.standard_normal((n, FEAT, T)).astype("float32"),
            rng.uniform(0, 1, (n, D, T)).astype("float32"),
            (rng.uniform(0, 1, (n, T)) > 0.7).astype("float32"),
            (rng.uniform(0, 1, (n, T)) > 0.7).astype("float32"))


def weighted_bce(pred, gt, eps=1e-6):
    pos = rt.cast(gt > 0.5, "float32")
    num_pos = rt.sum(pos)
    ratio = rt.numel(pos).astype("float32") / rt.maximum(num_pos, rt.to_tensor(1.0))
    coef_pos = 0.5 * ratio / rt.maximum(ratio - 1.0, rt.to_tensor(1.0))
    coef_neg = 0.5 * ratio / ratio
    loss = coef_pos * pos * rt.log(pred + eps) + coef_neg * (1.0 - pos) * rt.log(1.0 - pred + eps)
    return -rt.mean(loss)


def bmn_loss(model, x, gt_iou, gt_start, gt_end):
    conf, start, end = model(x)
    valid = rt.to_tensor((np.arange(D)[:, None] + np.arange(T)[None, :] < T).astype("float32"))
    reg = rt.sum(F.square_error_cost(conf[:, 0] * valid, gt_iou * valid)) / rt.sum(valid)
    cls = weighted_bce(conf[:, 1], gt_iou)
    return weighted_bce(start, gt_start) + weighted_bce(end, gt_end) + 10.0 * reg + cls


def test_bmn(tmp_path):
    check_family(tmp_path, BMN, bmn_batch, bmn_loss, 1, lr=0.005)


# ---- CycleGAN -------------------------------------------------------------------------------

class ConvNormRelu(nn.Layer):
    def __init__(self, cin, cout, k, stride=1, padding=0, relu=True, transpose=False):
        super().__init__()
        conv = nn.Conv2DTranspose if transpose else nn.Conv2D
        extra = {"output_padding": 1} if transpose else {}
        self.conv = conv(cin, cout, k, stride=stride, padding=padding, bias_attr=False, **extra)
        self.norm = nn.InstanceNorm2D(cout)
        self.relu = relu

    def forward(self, x):
        y = self.norm(self.conv(x))
        return F.relu(y) if self.relu else y


class ResBlock(nn.Layer):
    def __init__(self, dim):
        super().__init__()
        self.c1 = ConvNormRelu(dim, dim, 3)
        self.c2 = ConvNormRelu(dim, dim, 3, relu=False)

    def forward(self, x):
        y = self.c1(F.pad(x, [1, 1, 1, 1], mode="reflect"))
        return x + self.c2(F.pad(y, [1, 1, 1, 1], mode="reflect"))


class Generator(nn.Layer):
    def __init__(self, ch=4):
        super().__init__()
        self.down = nn.Sequential(ConvNormRelu(3, ch, 3, padding=1),
                                  ConvNormRelu(ch, 2 * ch, 3, stride=2, padding=1))
        self.res = ResBlock(2 * ch)
        self.up = ConvNormRelu(2 * ch, ch, 3, stride=2, padding=1, transpose=True)
        self.out = nn.Conv2D(ch, 3, 3, padding=1)

    def forward(self, x):
        return F.tanh(self.out(self.up(self.res(self.down(x)))))


class Discriminator(nn.Layer):
    def __init__(self, ch=4):
        super().__init__()
        self.c1 = nn.Conv2D(3, ch, 4, stride=2, padding=1)
        self.c2 = ConvNormRelu(ch, 2 * ch, 4, stride=2, padding=1, relu=False)
        self.out = nn.Conv2D(2 * ch, 1, 3, padding=1)

    def forward(self, x):
        return self.out(F.leaky_relu(self.c2(F.leaky_relu(self.c1(x), 0.2)), 0.2))


class CycleGAN(nn.Layer):
    def __init__(self):
        super().__init__()
        self.g_ab, self.g_ba = Generator(), Generator()
        self.d_a, self.d_b = Discriminator(), Discriminator()

    def forward(self, real_a, real_b):
        fake_b, fake_a = self.g_ab(real_a), self.g_ba(real_b)
        cyc_a, cyc_b = self.g_ba(fake_b), self.g_ab(fake_a)
        # discriminator scores: on fakes for the generators, on detached fakes for D itself
        d_gen = (self.d_b(fake_b), self.d_a(fake_a))
        d_real = (self.d_b(real_b), self.d_a(real_a))
        d_fake = (self.d_b(fake_b.detach()), self.d_a(fake_a.detach()))
        return fake_b, fake_a, cyc_a, cyc_b, d_gen, d_real, d_fake


def gan_batch(rng, n):
    return tuple(np.tanh(rng.standard_normal((n, 3, 8, 8))).astype("float32") for _ in range(2))


def cyclegan_loss(model, real_a, real_b):
    _, _, cyc_a, cyc_b, d_gen, d_real, d_fake = model(real_a, real_b)
    g_adv = sum(rt.mean(rt.square(d - 1.0)) for d in d_gen)
    cyc = rt.mean(rt.abs(cyc_a - real_a)) + rt.mean(rt.abs(cyc_b - real_b))
    d_loss = sum(rt.mean(rt.square(d - 1.0)) for d in d_real) + sum(
        rt.mean(rt.square(d)) for d in d_fake)
    return g_adv + 10.0 * cyc + 0.5 * d_loss


def test_cyclegan(tmp_path):
    check_family(tmp_path, CycleGAN, gan_batch, cyclegan_loss, 2, lr=0.002)
