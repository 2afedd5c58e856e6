"""Inference model files: `PATH.json` (the program) and `PATH.npz` (its parameters).

Saving is atomic. Both files are written under temporary names in the target folder
(`.NAME.json.tmp-*`, `.NAME.npz.tmp-*`), flushed to disk, and only then renamed over the final
names: the parameters first, the program last. A save killed before the renames leaves the
previous model as it was; one killed between the two renames leaves the previous program
beside the new parameters, which loading refuses (the checksum below differs).

The program records the size and SHA-256 of its parameter file, and a SHA-256 of its own
content (`"checksum"`, over the canonical JSON of every other field), so a program is never
run with the parameters of another save, and a damaged or edited program is refused.

Loading checks everything before it returns, and raises `ModelFormatError` (naming the file and
what is wrong) for any damaged, truncated, tampered, mismatched or missing file: the checksums;
each `.npz` member is an uncompressed `.npy` whose header (dtype, shape, order) is the one the
program declares for that parameter and whose size is exactly what that needs, checked before a
byte of it is read; then the whole program (`model_check`) and its compiled form. Nothing in the
files is executed and no pickle is read.

>>> import os, tempfile, runtime as rt
>>> from runtime.program import model_file
>>> main = rt.static.Program()
>>> with rt.static.program_guard(main):
...     x = rt.static.data('x', [None, 2], 'float32')
...     y = x * 2.0
>>> prefix = os.path.join(tempfile.mkdtemp(), 'new', 'folder', 'model')
>>> model_file.save(prefix, main, ['x'], [y.name])
>>> program, feeds, fetches = model_file.load(prefix)
>>> feeds, len(fetches)
(['x'], 1)
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
import zipfile

import numpy as np

from .. import backend
from ..dtypes import bfloat16
from ..parameter import Parameter
from ..tensor import Tensor
from . import model_check, model_structure, serialize
from .serialize import ModelFormatError

# dtypes a .npy header cannot name, stored as the unsigned integers of their bits
_BIT_VIEWS = {bfloat16: np.dtype(np.uint16)}
_CHUNK = 1 << 20
_NPY_VERSIONS = ((1, 0), (2, 0))
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # fixed: the same model always gives the same bytes
MAX_PROGRAM_BYTES = 1 << 30
PAIR_WAIT = 2.0  # seconds a load waits for another process's save to rename its program


# ---- saving -----------------------------------------------------------------------------------

def save(prefix: str, program, feeds: list, fetches: list, structure: dict | None = None
         ) -> None:
    """Write `prefix.json` and `prefix.npz` for `program` (already pruned to `fetches`),
    creating missing parent folders; atomic as described in the module docstring.
    `structure` nests the feeds and fetches (`model_structure`). Nothing is
    written when the path is unusable (`ModelPathError`) or when the program fails the checks
    loading makes (`ModelFormatError`): a save never leaves a model that does not load."""
    prefix = os.fspath(prefix)
    folder, base = check_target(prefix)
    d = serialize.program_to_dict(program)
    d["feed"], d["fetch"] = list(feeds), list(fetches)
    if structure is not None:
        d["structure"] = structure
    try:
        as_read = _as_json_reads_it(d, prefix + ".json")
        _declared_parameters(as_read, prefix + ".json")
        _checked_program(as_read, program.tensors, prefix + ".json")
        _structure(as_read, prefix + ".json")
    except ModelFormatError as e:
        why = str(e).removeprefix(f"{e.path}: ")
        raise ModelFormatError(f"not saved (nothing was written): the program fails the "
                               f"checks loading makes, so the files would not load: {why}",
                               e.path) from None
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as e:
        raise ModelPathError(f"cannot save the model at {prefix!r}: cannot create the folder "
                             f"{folder!r} ({e.strerror})") from None
    arrays = {name: _stored(t, program.global_block().vars[name])
              for name, t in program.tensors.items()}
    temps = []
    try:
        try:
            npz_tmp = _temp(folder, base, ".npz", temps)
        except OSError as e:
            raise ModelPathError(f"cannot save the model at {prefix!r}: cannot write in the "
                                 f"folder {folder!r} ({e.strerror})") from None
        with open(npz_tmp, "wb") as f:
            _write_parameters(f, arrays)
            _sync(f)
        size, digest = _digest_file(npz_tmp)
        d["parameters"] = {"size": size, "sha256": digest}
        d["checksum"] = content_checksum(d)
        json_tmp = _temp(folder, base, ".json", temps)
        with open(json_tmp, "w", encoding="utf-8") as f:
            json.dump(d, f, indent=1)
            _sync(f)
        os.replace(npz_tmp, prefix + ".npz")
        temps.remove(npz_tmp)
        _between_renames()
        os.replace(json_tmp, prefix + ".json")
        temps.remove(json_tmp)
        _sync_folder(folder)
    finally:
        for t in temps:
            try:
                os.remove(t)
            except OSError:
                pass


def _as_json_reads_it(d: dict, path: str) -> dict:
    """`d` after a trip through the JSON text the loader parses (tuples become lists; a NaN
    or infinite number, which the loader refuses, is refused here)."""
    try:
        return json.loads(json.dumps(d), object_pairs_hook=_no_duplicates,
                          parse_constant=_no_constant)
    except ValueError as e:
        raise ModelFormatError(f"the program does not write as JSON ({_first_line(e)})",
                               path) from None


class ModelPathError(ValueError):
    """A model path that cannot be written: empty, a folder, or in a place that is not a
    writable folder. Raised before anything is written."""


def check_target(prefix: str) -> tuple[str, str]:
    """(folder, file name prefix) of a model path, checked: the folder exists or can be
    made, and is writable."""
    example = os.path.join(prefix or "out", "model")
    if not prefix or prefix.endswith(("/", os.sep)) or os.path.isdir(prefix):
        what = "empty" if not prefix else "a folder"
        raise ModelPathError(f"the model path {prefix!r} is {what}; give a file name prefix "
                             f"(PATH.json and PATH.npz are written), e.g. {example!r}")
    folder, base = os.path.split(os.path.abspath(prefix))
    existing = folder
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        raise ModelPathError(f"cannot save the model at {prefix!r}: {existing!r} is a file, "
                             "not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ModelPathError(f"cannot save the model at {prefix!r}: the folder {existing!r} is "
                             "not writable")
    return folder, base


def _stored(tensor, var) -> np.ndarray:
    a = np.asarray(backend.to_numpy(tensor._data), order="C")
    view = _BIT_VIEWS.get(var.dtype)
    return a.view(view) if view is not None else a


def _temp(folder: str, base: str, ext: str, temps: list) -> str:
    fd, path = tempfile.mkstemp(dir=folder, prefix=f".{base}{ext}.tmp-")
    os.close(fd)
    temps.append(path)
    return path


def _write_parameters(f, arrays: dict) -> None:
    """One uncompressed `.npy` member per parameter (what `np.savez` writes)."""
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        for name, a in arrays.items():
            info = zipfile.ZipInfo(name + ".npy", date_time=_ZIP_TIME)
            with zf.open(info, "w", force_zip64=True) as m:
                np.lib.format.write_array(m, a, allow_pickle=False)


def _between_renames() -> None:
    """Nothing; the crash tests replace it to stop a save between its two renames."""


def _sync(f) -> None:
    f.flush()
    os.fsync(f.fileno())


def _sync_folder(folder: str) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _digest_file(path: str) -> tuple[int, str]:
    with open(path, "rb") as f:
        return _digest_stream(f)


def _digest_stream(f) -> tuple[int, str]:
    h, size = hashlib.sha256(), 0
    while True:
        chunk = f.read(_CHUNK)
        if not chunk:
            return size, h.hexdigest()
        h.update(chunk)
        size += len(chunk)


def content_checksum(d: dict) -> str:
    """The `"checksum"` a program dict must carry: `"sha256:"` and the digest below. (For tools
    that rewrite a saved program on purpose; loading still checks the whole program.)"""
    return "sha256:" + _content_digest(d)


def _content_digest(d: dict) -> str:
    """SHA-256 of the canonical JSON of every field but "checksum" (so reformatting the file
    keeps it valid, and any change of content does not)."""
    body = {k: v for k, v in d.items() if k != "checksum"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


# ---- loading ----------------------------------------------------------------------------------

def load(prefix: str) -> tuple:
    """(program, feed names, fetch names) of the model at `prefix`, checked; any problem with
    the files raises `ModelFormatError`."""
    return load_structured(prefix)[:3]


def load_structured(prefix: str, max_result_bytes: int | None = None) -> tuple:
    """`load`'s (program, feeds, fetches) plus the checked structure of the inputs and
    outputs (`{"inputs": [node, ...], "outputs": node}`, see `model_structure`), or None for
    a model saved without one (flat tensors in, a tensor or a list of tensors out).

    A program beside parameters of another save is what a load sees while another process
    saves the same model (between its two renames): the load reads the pair again, waiting
    while that save's program is still a temporary file (up to `PAIR_WAIT` seconds). The same
    mixed pair read twice with no save under way in between stays mixed (a save killed
    between the renames, a file copied from elsewhere) and is refused."""
    prefix = os.fspath(prefix)
    deadline = time.monotonic() + PAIR_WAIT
    last = None
    while True:
        try:
            return _load_once(prefix, max_result_bytes)
        except _MixedPair as e:
            # the same mixed pair twice, with no save under way between the two reads: it
            # stays (and reading it again once more catches a save that just renamed)
            state = (e.checksum, e.found)
            if state == last or time.monotonic() >= deadline:
                raise
            last = None if _saving(prefix) else state
            if last is None:
                time.sleep(0.002)


def _saving(prefix: str) -> bool:
    """Whether a save of `prefix` has its program written under a temporary name."""
    folder, base = os.path.split(os.path.abspath(prefix))
    start = f".{base}.json.tmp-"
    try:
        return any(name.startswith(start) for name in os.listdir(folder))
    except OSError:
        return False


class _MixedPair(ModelFormatError):
    """The parameter file (its size or digest: `found`) is not the one the program (of
    `checksum`) was saved with."""

    def __init__(self, message: str, path: str, found):
        super().__init__(message, path)
        self.found, self.checksum = found, None


def _load_once(prefix: str, max_result_bytes: int | None = None) -> tuple:
    json_path, npz_path = prefix + ".json", prefix + ".npz"
    d = _read_program_file(json_path)
    declared = _declared_parameters(d, json_path)
    try:
        tensors = _read_parameters(npz_path, json_path, d, declared)
    except _MixedPair as e:
        e.checksum = d.get("checksum")
        raise
    program = _checked_program(d, tensors, json_path, max_result_bytes)
    return (program, *model_check.feeds_and_fetches(d), _structure(d, json_path))


def _structure(d: dict, json_path: str) -> dict | None:
    s = d.get("structure")
    if s is None:
        return None
    feeds, fetches = model_check.feeds_and_fetches(d)
    try:
        if not isinstance(s, dict) or set(s) != {"inputs", "outputs"} or not isinstance(
                s["inputs"], list):
            raise ModelFormatError("\"structure\" is not {\"inputs\": [...], \"outputs\": ...}")
        model_structure.check({"tuple": s["inputs"]}, "input", len(feeds))
        model_structure.check(s["outputs"], "output", len(fetches))
    except ModelFormatError as e:
        raise ModelFormatError(str(e), json_path) from None
    return s


def _checked_program(d: dict, tensors: dict, json_path: str,
                     max_result_bytes: int | None = None):
    """The Program of a program dict with its parameters, after every check of
    `model_check` and a compile (what `load` runs, and `save` before it writes)."""
    try:
        program = serialize.program_from_dict(d, tensors)
        feeds, fetches = model_check.feeds_and_fetches(d)
        model_check.check(program, feeds, fetches, max_result_bytes)
        model_check.compile_check(program, fetches)
    except ModelFormatError as e:
        raise ModelFormatError(str(e), json_path) from None
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, RecursionError) as e:
        # a check met data of a kind no saved program has
        raise ModelFormatError(f"invalid program ({type(e).__name__}: {_first_line(e)})",
                               json_path) from None
    return program


def _read_program_file(path: str) -> dict:
    size = _existing_size(path, "the program file")
    if size > MAX_PROGRAM_BYTES:
        raise ModelFormatError(f"the program file is {size} bytes, more than the "
                               f"{MAX_PROGRAM_BYTES} this runtime reads", path)
    with open(path, "rb") as f:
        data = f.read(MAX_PROGRAM_BYTES + 1)
    try:
        d = json.loads(data.decode("utf-8"), object_pairs_hook=_no_duplicates,
                       parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise ModelFormatError(f"not a saved program: the JSON is damaged or truncated "
                               f"({type(e).__name__}: {_first_line(e)})", path) from None
    if not isinstance(d, dict) or d.get("format") != serialize.FORMAT:
        raise ModelFormatError("not a saved program (no \"format\": \"d2s-program\")", path)
    if d.get("version") != serialize.VERSION:
        raise ModelFormatError(f"format version {serialize._short(d.get('version'))}; this "
                               f"runtime reads version {serialize.VERSION}", path)
    checksum = d.get("checksum")
    if not isinstance(checksum, str) or not checksum.startswith("sha256:"):
        raise ModelFormatError("the program has no checksum (it was saved by an older version "
                               "or edited by hand); save the model again", path)
    try:
        digest = _content_digest(d)
    except ValueError:  # a number JSON cannot write back (1e999)
        digest = None
    if checksum[len("sha256:"):] != digest:
        raise ModelFormatError("the program's content does not match its checksum: the file "
                               "is damaged or was edited after saving", path)
    return d


def _no_duplicates(pairs: list) -> dict:
    d = dict(pairs)
    if len(d) != len(pairs):
        raise ValueError("a key appears twice in one object")
    return d


def _no_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def _first_line(e: BaseException) -> str:
    return str(e).split("\n", 1)[0][:200]


def _existing_size(path: str, what: str) -> int:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise ModelFormatError(f"{what} is missing (a model is PATH.json plus PATH.npz, as "
                               "d2s.save writes them)", path) from None
    except OSError as e:
        raise ModelFormatError(f"cannot read {what}: {e.strerror}", path) from None
    if not os.path.isfile(path):
        raise ModelFormatError(f"{what} is not a regular file", path)
    return st.st_size


def _declared_parameters(d: dict, json_path: str) -> dict:
    """name -> (DType, shape, trainable) of each persistable, from the checked program."""
    try:
        pers = d["persistables"]
        blocks = d["blocks"]
        if not isinstance(pers, dict) or not isinstance(blocks, list) or not blocks:
            raise TypeError("no persistables or blocks")
        global_vars = {}
        for vd in serialize._list(blocks[0]["vars"]):
            name = serialize._str(vd["name"])
            global_vars[name] = vd
        out = {}
        for name, entry in pers.items():
            vd = global_vars.get(name)
            if vd is None or vd.get("persistable") is not True:
                raise ModelFormatError(f"persistable {name!r} is not a persistable variable of "
                                       "the program's top block")
            shape = serialize._shape(vd["shape"], name)
            if shape is None or -1 in shape:
                raise ModelFormatError(f"persistable {name!r} has no fixed shape ({shape})")
            trainable = entry.get("trainable") if isinstance(entry, dict) else None
            out[name] = (serialize._dtype(vd["dtype"], name), tuple(shape),
                         serialize._bool(trainable, f"the trainable flag of {name!r}"))
        return out
    except ModelFormatError as e:
        raise ModelFormatError(str(e), json_path) from None
    except (KeyError, TypeError, AttributeError, IndexError) as e:
        raise ModelFormatError(f"corrupted program file: {type(e).__name__}: {e}",
                               json_path) from None


def _read_parameters(path: str, json_path: str, d: dict, declared: dict) -> dict:
    info = d.get("parameters")
    if not isinstance(info, dict) or info.get("size").__class__ is not int or \
            not isinstance(info.get("sha256"), str):
        raise ModelFormatError("the program does not record the size and SHA-256 of its "
                               "parameter file", json_path)
    size = _existing_size(path, "the parameter file")
    if size != info["size"]:
        raise _MixedPair(
            f"the parameter file is {size} bytes but its program ({os.path.basename(json_path)}"
            f") was saved with {info['size']} bytes of parameters: the file is truncated, "
            "damaged, or from another save", path, found=size)
    with open(path, "rb") as f:
        got_size, digest = _digest_stream(f)
        if got_size != size or digest != info["sha256"]:
            raise _MixedPair(
                f"the parameters are not the ones saved with {os.path.basename(json_path)} "
                "(their SHA-256 differs): the file is damaged or from another save", path,
                found=digest)
        f.seek(0)
        try:
            return _read_members(f, size, declared)
        except ModelFormatError as e:
            raise ModelFormatError(str(e), path) from None
        except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError,
                NotImplementedError, KeyError) as e:
            raise ModelFormatError(f"not a valid parameter file ({type(e).__name__}: "
                                   f"{_first_line(e)})", path) from None


def _read_members(f, size: int, declared: dict) -> dict:
    with zipfile.ZipFile(f) as zf:
        infos = zf.infolist()
        names = [i.filename for i in infos]
        expected = {n + ".npy": n for n in declared}
        if len(set(names)) != len(names) or set(names) != set(expected):
            extra = sorted(set(names) - set(expected))[:3]
            missing = sorted(set(expected) - set(names))[:3]
            raise ModelFormatError(f"its arrays do not match the program's parameters (missing "
                                   f"{missing}, unexpected {extra})")
        out = {}
        for i in infos:
            name = expected[i.filename]
            dtype, shape, trainable = declared[name]
            a = _read_member(zf, i, name, dtype, shape, size)
            if dtype in _BIT_VIEWS:
                a = a.view(dtype.np)
            out[name] = Parameter(a, name=name) if trainable else Tensor(a, name=name)
            if not trainable:
                out[name].persistable = True
        return out


def _read_member(zf, info, name: str, dtype, shape: tuple, size: int) -> np.ndarray:
    stored = _BIT_VIEWS.get(dtype, np.dtype(dtype.np))
    nbytes = stored.itemsize * int(np.prod(shape, dtype=np.int64))
    if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 1 or \
            info.compress_size != info.file_size or info.file_size > size or \
            info.file_size < nbytes:
        raise ModelFormatError(f"array {name!r} is compressed, encrypted or of the wrong size "
                               f"({info.file_size} bytes stored, {nbytes} needed)")
    with zf.open(info) as m:
        version = np.lib.format.read_magic(m)
        if version not in _NPY_VERSIONS:
            raise ModelFormatError(f"array {name!r} has .npy format version {version}")
        read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                       else np.lib.format.read_array_header_2_0)
        got_shape, fortran, got_dtype = read_header(m)
        if got_dtype != stored or fortran or tuple(got_shape) != shape:
            raise ModelFormatError(
                f"array {name!r} is {got_dtype}{list(got_shape)} but the program declares "
                f"{dtype.name}{list(shape)}")
        offset = m.tell()
        if offset + nbytes != info.file_size:
            raise ModelFormatError(f"array {name!r} holds {info.file_size - offset} bytes of "
                                   f"data; {dtype.name}{list(shape)} needs {nbytes}")
        data = m.read(nbytes)  # reading to the end checks the member's CRC
        if len(data) != nbytes:
            raise ModelFormatError(f"array {name!r} is truncated")
    return np.frombuffer(data, dtype=stored).reshape(shape).copy()
