"""`import runtime, d2s` leaves out what costs more than NumPy itself to import and is needed
only by some programs: ml_dtypes (bfloat16) is imported on first use of bfloat16. Each check
runs in a fresh process."""
import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _python(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                         text=True, check=False, timeout=240,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_ml_dtypes_is_imported_on_first_use_of_bfloat16():
    out = _python("""
        import sys
        import runtime as rt, d2s
        print('ml_dtypes' in sys.modules)
        x = rt.to_tensor([1.5, 2.0], dtype='bfloat16')
        print('ml_dtypes' in sys.modules, x.dtype, (x * 2).numpy().astype('float32').tolist())
        print(rt.bfloat16 == x.numpy().dtype, rt.cast(x, 'float32').dtype)
    """)
    assert out.splitlines() == ["False", "True rt.bfloat16 [3.0, 4.0]", "True rt.float32"]


def test_a_bfloat16_array_made_by_the_user_is_known():
    out = _python("""
        import runtime as rt
        import numpy as np, ml_dtypes  # imported after runtime, by the user
        a = np.array([1.0, -2.0], dtype=ml_dtypes.bfloat16)
        t = rt.to_tensor(a)
        print(t.dtype, rt.abs(t).numpy().astype('float32').tolist())
    """)
    assert out.strip() == "rt.bfloat16 [1.0, 2.0]"
