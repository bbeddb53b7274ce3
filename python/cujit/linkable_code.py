"""Code to link into kernels, in memory or from files: numba-cuda's ``LinkableCode`` classes.

``PTXSource``, ``CUSource`` (CUDA C++, compiled by NVRTC), ``Cubin``, ``Fatbin``, ``Object``, ``Archive`` and
``LTOIR``, each with ``data`` (``str``, ``bytes``, any buffer, or an ``io.StringIO``/``io.BytesIO`` read on each
access), a ``name`` for the tools' messages, and optional ``setup_callback``/``teardown_callback`` (run when a
module that links the code is loaded/unloaded). ``LinkableCode.from_path(path)`` picks the class by extension.
Objects compare and hash by identity.
"""

import io
import os


class LinkableCode:
    """Code to link, in memory. ``kind`` names what the linker receives."""

    kind = None
    default_name = "<unnamed-code>"

    def __init__(self, data, name=None, setup_callback=None, teardown_callback=None, nrt=False):
        if setup_callback and not callable(setup_callback):
            raise TypeError("setup_callback must be callable")
        if teardown_callback and not callable(teardown_callback):
            raise TypeError("teardown_callback must be callable")
        if not isinstance(data, (str, bytes, bytearray, memoryview, io.StringIO, io.BytesIO)):
            try:
                memoryview(data)
            except TypeError:
                raise TypeError(
                    f"{type(self).__name__}: data must be str, bytes, a buffer, io.StringIO or "
                    f"io.BytesIO, got {type(data).__name__}"
                ) from None
        self._data = data
        self._name = name
        self.setup_callback = setup_callback
        self.teardown_callback = teardown_callback
        self.nrt = nrt

    @property
    def name(self):
        return self._name or self.default_name

    @property
    def data(self):
        if isinstance(self._data, (io.StringIO, io.BytesIO)):
            return self._data.getvalue()
        return self._data

    def __repr__(self):
        return f"<{type(self).__name__} {self.name!r}>"

    @staticmethod
    def from_path(path):
        """The LinkableCode of a file, by its extension (checked before the file is read)."""
        path = os.fspath(path)
        ext = os.path.splitext(path)[1]
        cls = _BY_EXTENSION.get(ext)
        if cls is None:
            raise ValueError(
                f"Unknown extension: {ext}" if ext else f"Don't know how to link file with no extension: {path}"
            )
        mode = "r" if cls in (CUSource, PTXSource) else "rb"
        with open(path, mode) as f:
            data = f.read()
        return cls(data, name=os.path.splitext(os.path.basename(path))[0])

    @staticmethod
    def class_for_kind(kind):
        """The subclass whose ``kind`` is ``kind`` ("ptx", "cu", "cubin", "fatbin", "object", "library", "ltoir")."""
        return _BY_KIND[kind]

    @staticmethod
    def from_path_or_obj(path_or_obj):
        if isinstance(path_or_obj, (str, os.PathLike)):
            return LinkableCode.from_path(path_or_obj)
        return path_or_obj


class PTXSource(LinkableCode):
    kind = "ptx"
    default_name = "<unnamed-ptx>"


class CUSource(LinkableCode):
    kind = "cu"
    default_name = "<unnamed-cu>"


class Fatbin(LinkableCode):
    kind = "fatbin"
    default_name = "<unnamed-fatbin>"


class Cubin(LinkableCode):
    kind = "cubin"
    default_name = "<unnamed-cubin>"


class Archive(LinkableCode):
    kind = "library"
    default_name = "<unnamed-archive>"


class Object(LinkableCode):
    kind = "object"
    default_name = "<unnamed-object>"


class LTOIR(LinkableCode):
    kind = "ltoir"
    default_name = "<unnamed-ltoir>"


_BY_KIND = {cls.kind: cls for cls in (PTXSource, CUSource, Fatbin, Cubin, Archive, Object, LTOIR)}
_BY_EXTENSION = {
    ".ptx": PTXSource,
    ".cu": CUSource,
    ".fatbin": Fatbin,
    ".cubin": Cubin,
    ".a": Archive,
    ".o": Object,
    ".ltoir": LTOIR,
}

#: File extensions ``link=`` accepts and the kind each gives (``.lib``/``.obj`` as numba-cuda's linker does).
EXTENSION_KINDS = {
    ".cu": "cu",
    ".ptx": "ptx",
    ".cubin": "cubin",
    ".fatbin": "fatbin",
    ".o": "object",
    ".obj": "object",
    ".a": "library",
    ".lib": "library",
    ".ltoir": "ltoir",
}
