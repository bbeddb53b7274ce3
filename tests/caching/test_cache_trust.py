"""The disk cache never runs code (docs/caching.md, "Who may write the cache"): entries are typed records
(``_core.cache.Record``) that decode to data or to nothing, a forged entry with a valid checksum is compiled over
and runs nothing, exception classes are found by name among modules already imported, and a cache directory, an
entry or an AOT bundle that another user owns or others may write is refused with one warning, unless
``CUJIT_CACHE_SHARED=1`` opts in to a shared cache. Programs run on the fake libcuda, no GPU needed."""

import os
import pickle
import stat
import sys

import pytest

from cujit import _core, aot, caching

import programs
from test_aot import run_program as run_with_bundle, write_module
from test_disk_cache import run_program

Record = _core.cache.Record
Constant = _core.cache.Constant


def entry_of(cache, section):
    (entry,) = [os.path.join(d, f) for d, _, files in os.walk(cache / section) for f in files]
    return entry


# ---- records ----------------------------------------------------------------------------------------------------


def a_record(**changes):
    fields = dict(
        code=b"\x7fELF cubin bytes",
        symbol="_Z1kPf",
        arch="sm_90",
        cooperative=True,
        links=[("cu", "ab" * 16), ("ptx", "cd" * 16)],
        raises=[
            _core.cache.Raise(
                "builtins:ValueError",
                [Constant(Constant.Kind.str, "bad"), Constant(Constant.Kind.int, "-3")],
                "k",
                "/src/k.py",
                12,
            )
        ],
    )
    fields.update(changes)
    return Record(Record.Kind.kernel, **fields)


def test_a_record_round_trips():
    back = Record.decode(a_record().encode())
    assert back.code == b"\x7fELF cubin bytes" and back.symbol == "_Z1kPf" and back.arch == "sm_90"
    assert back.cooperative and back.links == [("cu", "ab" * 16), ("ptx", "cd" * 16)]
    (site,) = back.raises
    assert (site.exception, site.function, site.filename, site.line) == ("builtins:ValueError", "k", "/src/k.py", 12)
    assert [(c.kind, c.text) for c in site.args] == [(Constant.Kind.str, "bad"), (Constant.Kind.int, "-3")]


def test_anything_but_one_whole_record_decodes_to_nothing():
    good = a_record().encode()
    assert Record.decode(good) is not None
    for bad in [
        b"",
        good[:-1],
        good + b"x",
        b"CUJITREC1" + good[9:],
        pickle.dumps({"code": b"x"}),
        good[:9] + b"\x07" + good[10:],
    ]:
        assert Record.decode(bad) is None, bad[:16]
    empty = Record(Record.Kind.kernel, b"").encode()
    links_count_at = 9 + 1 + 4 * 8 + 1  # magic, kind, four empty texts, cooperative
    forged = empty[:links_count_at] + (1 << 60).to_bytes(8, "little") + empty[links_count_at + 8 :]
    assert Record.decode(forged) is None  # a forged count allocates nothing


def test_exception_classes_are_found_only_among_imported_modules():
    assert caching._exception_class("builtins:ValueError") is ValueError
    assert caching._exception_class("cujit.errors:TypingError").__name__ == "TypingError"
    assert caching._exception_class("posix:system") is None  # not an exception class
    assert caching._exception_class("builtins:print") is None
    assert caching._exception_class("never_imported_module_7f3a:Boom") is None
    assert "never_imported_module_7f3a" not in sys.modules  # looked up, not imported


def test_raise_sites_are_kept_by_name_and_constants():
    site = (KeyError, ("missing", 3, 2.5, True, None), "k", "k.py", 9)
    assert caching._raise_site(caching._raise_record(site)) == site

    class Local(Exception):
        pass

    with pytest.raises(TypeError, match="cannot be found by its name"):
        caching._raise_record((Local, (), "k", "k.py", 1))
    with pytest.raises(TypeError, match="not a constant"):
        caching._raise_record((ValueError, ([1, 2],), "k", "k.py", 1))


# ---- forged entries ---------------------------------------------------------------------------------------------


class RunsCode:
    """Unpickled, it creates the file `path`: what an attacker's entry would do under pickle."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_a_forged_kernel_entry_runs_nothing_and_is_compiled_over(fake_driver, tmp_path):
    cache = tmp_path / "cache"
    run_program(fake_driver, tmp_path, cache)
    entry = entry_of(cache, "kernel")
    marker = tmp_path / "ran"
    disk = _core.cache.DiskCache(str(cache))
    assert disk.put("kernel", os.path.basename(entry), pickle.dumps(RunsCode(str(marker))))  # a valid checksum
    again, _ = run_program(fake_driver, tmp_path, cache)
    assert not marker.exists()
    assert again["hits"] == 0 and again["compiles"] == 1 and again["writes"] == 1 and again["setup"] == 1
    assert disk.get_record("kernel", os.path.basename(entry)).kind == Record.Kind.kernel  # a record again


def test_a_forged_record_naming_a_function_is_compiled_over(fake_driver, tmp_path):
    cache = tmp_path / "cache"
    run_program(fake_driver, tmp_path, cache)
    key = os.path.basename(entry_of(cache, "kernel"))
    disk = _core.cache.DiskCache(str(cache))
    real = disk.get_record("kernel", key)
    forged = Record(
        Record.Kind.kernel,
        real.code,
        symbol=real.symbol,
        arch=real.arch,
        links=real.links,
        raises=[_core.cache.Raise("posix:system", [Constant(Constant.Kind.str, "touch ran")], "k", "k.py", 1)],
    )
    assert disk.put_record("kernel", key, forged)
    again, _ = run_program(fake_driver, tmp_path, cache)
    assert again["hits"] == 0 and again["compiles"] == 1
    assert not (tmp_path / "ran").exists()


COMPILE = """
import json
import cujit
from cujit import cuda
def udf(x):
    return x * 2.0
ptx, ret = cuda.compile_ptx(udf, "float64(float64)", device=True, cc=(9, 0))
print(json.dumps({"hits": cujit.stats()["cache hits"], "ptx": ".func" in ptx, "ret": str(ret)}))
"""


def test_a_forged_compile_output_runs_nothing(tmp_path):
    script = tmp_path / "compile_prog.py"
    script.write_text(COMPILE)
    env = dict(os.environ, CUJIT_CACHE="1", CUJIT_CACHE_DIR=str(tmp_path / "cache"))
    assert programs.run([script], env)["hits"] == 0
    entry = entry_of(tmp_path / "cache", "compile")
    marker = tmp_path / "ran"
    _core.cache.DiskCache(str(tmp_path / "cache")).put(
        "compile", os.path.basename(entry), pickle.dumps(RunsCode(str(marker)))
    )
    again = programs.run([script], env)
    assert again == {"hits": 0, "ptx": True, "ret": "float64"} and not marker.exists()
    assert programs.run([script], env)["hits"] == 1  # the entry was written over with a record


# ---- who may write the directory ---------------------------------------------------------------------------------


def warnings_in(err, text):
    return err.count(text)


def test_a_new_cache_directory_is_private(fake_driver, tmp_path):
    cache = tmp_path / "new" / "cache"
    run_program(fake_driver, tmp_path, cache)
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o700


@pytest.mark.parametrize("mode", [0o777, 0o775, 0o1777], ids=["world-writable", "group-writable", "sticky-tmp"])
def test_a_directory_others_may_write_is_refused_with_one_warning(fake_driver, tmp_path, mode):
    cache = tmp_path / "cache"
    cache.mkdir()
    os.chmod(cache, mode)
    out, err = run_program(fake_driver, tmp_path, cache, env={"PYTHONWARNINGS": "always"})
    assert out["compiles"] == 1 and out["setup"] == 1 and out["writes"] == 0  # compiled without the cache
    assert warnings_in(err, "not using the disk cache") == 1, err
    assert "writable by" in err and "CUJIT_CACHE_SHARED=1" in err
    assert not os.listdir(cache)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a directory to another user needs root")
def test_a_directory_another_user_owns_is_refused(fake_driver, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    os.chown(cache, 54321, 54321)
    out, err = run_program(fake_driver, tmp_path, cache, env={"PYTHONWARNINGS": "always"})
    assert out["compiles"] == 1 and out["writes"] == 0
    assert "belongs to another user (uid 54321)" in err


def test_an_entry_others_may_write_is_not_read(fake_driver, tmp_path):
    cache = tmp_path / "cache"
    run_program(fake_driver, tmp_path, cache)
    entry = entry_of(cache, "kernel")
    os.chmod(entry, 0o666)
    out, err = run_program(fake_driver, tmp_path, cache, env={"PYTHONWARNINGS": "always"})
    assert out["hits"] == 0 and out["compiles"] == 1 and out["writes"] == 1
    assert warnings_in(err, "is writable by others") == 1, err
    healed, _ = run_program(fake_driver, tmp_path, cache)  # written over by this user, 0644: read again
    assert healed["hits"] == 1


def test_a_shared_cache_works_across_processes_when_opted_in(fake_driver, tmp_path):
    cache = tmp_path / "fleet"
    cache.mkdir()
    os.chmod(cache, 0o777)
    shared = {"CUJIT_CACHE_SHARED": "1", "PYTHONWARNINGS": "always"}
    first, err1 = run_program(fake_driver, tmp_path, cache, env=shared)
    os.chmod(entry_of(cache, "kernel"), 0o666)  # as another member of the fleet might leave it
    second, err2 = run_program(fake_driver, tmp_path, cache, env=shared)
    assert first["writes"] == 1 and second["hits"] == 1 and second["compiles"] == 0 and second["setup"] == 1
    assert "not using" not in err1 + err2 and "not read" not in err1 + err2


# ---- AOT bundles ---------------------------------------------------------------------------------------------------


def test_a_bundle_others_may_write_is_not_loaded(tmp_path, fake_driver):
    write_module(tmp_path)
    aot.build(str(tmp_path / "kern.py"), ["sm_90"], str(tmp_path / "bundle"))
    sys.modules.pop("kern", None)
    assert run_with_bundle(tmp_path, fake_driver, tmp_path / "bundle")["aot"] == 1
    os.chmod(tmp_path / "bundle" / "index.json", 0o666)
    refused = run_with_bundle(tmp_path, fake_driver, tmp_path / "bundle")
    assert refused["aot"] == 0 and refused["compiles"] == 1  # compiled as usual
    assert caching.load_bundle.__doc__ and "CUJIT_CACHE_SHARED" in caching.load_bundle.__doc__
    with pytest.warns(Warning, match="not using the AOT bundle .* writable by others"):
        assert aot.load(str(tmp_path / "bundle")) is None
