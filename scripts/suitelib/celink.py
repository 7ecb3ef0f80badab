"""Compiler Explorer links that open a lesson, carried in the URL fragment.

Compiler Explorer (CE) reads its layout from `location.hash` on the client (static/main.ts calls
`deserialiseState(window.location.hash.substring(1))` from static/url.ts), so the link's length is
bounded by the browser, not by a server. A fragment is written the way CE's own "share" button writes
it (shared/url-serialization.ts, `serialiseState`):

    inner    = quote(rison.encode_object(minify(state)))       # the GoldenLayout config, minified
    fragment = quote(rison.encode_object({z: lzstring.compressToBase64(inner)}))   # "z:..."

and read back by the inverse (`unrisonify` = rison.decode_object(decodeURIComponent(text with '+'
as a space)), then lz-string, then `unrisonify` again, then `loadState`: version 4 -> unminify).
Everything here is the Python standard library; scripts/node/decode.js checks it with the real
npm packages.
"""

import decimal
import math
import re
import urllib.parse

from . import SuiteError

CE_ROOT = "https://godbolt.org/"
CE_LANG = "cuda"
CE_COMPILER = "nvcc130"
CE_OPTIONS = "-std=c++17 -O3 -arch=sm_75"


def ce_state(source, exec_args=None):
    """The CE session (GoldenLayout config, version 4) as deserialiseState returns it. exec_args: the
    program's command-line arguments, one string: the executor pane's state carries them as `execArgs`
    (static/panes/executor.interfaces.ts; executor.ts sends them as executeParameters.args), and
    `argsPanelShown` opens the field where the student sees them."""
    def pane(name, **state):
        return {"type": "component", "componentName": name, "componentState": state}
    build = dict(source=1, lang=CE_LANG, compiler=CE_COMPILER, options=CE_OPTIONS, libs=[])
    return {"version": 4, "content": [{"type": "row", "content": [
        pane("codeEditor", id=1, source=source, lang=CE_LANG),
        pane("compiler", **build),
        pane("executor", **build, compilationPanelShown=True, compilerOutShown=True,
             **({"execArgs": exec_args, "argsPanelShown": True} if exec_args else {})),
    ]}]}


def ce_link(source, exec_args=None):
    """https://godbolt.org/#z:... that opens `source` with nvcc 13.0 and an executor that runs it
    (with the command-line arguments exec_args, one string, when given)."""
    inner = uri_quote(rison_encode(minify(ce_state(source, exec_args)))[1:-1])
    return CE_ROOT + "#" + uri_quote("z:" + rison_encode(lz_compress_base64(inner)))


def ce_decode(url):
    """The state CE's deserialiseState builds from the link's fragment (version 4 only)."""
    if "#" not in url:
        raise SuiteError(f"not a Compiler Explorer fragment link: {url[:60]}")
    state = _unrisonify(url.split("#", 1)[1])
    if isinstance(state, dict) and state.get("z"):
        data = lz_decompress_base64(state["z"])
        if not data:
            raise SuiteError("lzstring decompress error, url is corrupted")
        state = _unrisonify(data)
    if not isinstance(state, dict) or state.get("version") != 4:
        raise SuiteError("not a version 4 Compiler Explorer state")
    return unminify(state)


# --- GoldenLayout's ConfigMinifier (CE's shared/url-serialization.ts) -------------------------------
_KEYS = ("settings hasHeaders constrainDragToContainer selectionEnabled dimensions borderWidth "
         "minItemHeight minItemWidth headerHeight dragProxyWidth dragProxyHeight labels close maximise "
         "minimise popout content componentName componentState id width type height isClosable title "
         "popoutWholeStack openPopouts parentId activeItemIndex reorderEnabled borderGrabWidth").split()
_VALUES = [True, False, "row", "column", "stack", "component", "close", "maximise", "minimise",
           "open in new window"]
_B36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def _min(value, table):
    if isinstance(value, str) and len(value) == 1:
        return "___" + value
    for i, known in enumerate(table):  # type-strict: 1 is not True here, as in JS indexOf
        if type(known) is type(value) and known == value:
            return _B36[i]
    return value


def _max(value, table):
    if isinstance(value, str) and len(value) == 1:
        i = _B36.find(value.lower())
        return table[i] if 0 <= i < len(table) else None
    if isinstance(value, str) and value.startswith("___"):
        return value[3]
    return value


def _walk(node, fn):
    if isinstance(node, list):
        return [_walk(v, fn) for v in node]
    if isinstance(node, dict):
        return {fn(k, _KEYS): _walk(v, fn) for k, v in node.items()}
    return fn(node, _VALUES)


def minify(config):
    return _walk(config, _min)


def unminify(config):
    return _walk(config, _max)


# --- rison (CE's shared/rison.ts, from Nanonid/rison) ------------------------------------------------
_NOT_IDCHAR = " '!:(),*@$"
_ID_RE = re.compile(r"[^-0-9%s][^%s]*" % (re.escape(_NOT_IDCHAR), re.escape(_NOT_IDCHAR)))
_NUMBER_RE = re.compile(r"-?[0-9]*(\.[0-9]*)?([eE]-?[0-9]*)?")


def _number(x):
    if isinstance(x, int) or (x.is_integer() and abs(x) < 1e21):
        return str(int(x))
    mantissa, _, exp = repr(x).partition("e")
    if exp and -7 < int(exp) < 21:  # JS writes these positionally
        return format(decimal.Decimal(repr(x)), "f")
    return mantissa + ("e" + str(int(exp)) if exp else "")


def rison_encode(v):
    """rison.encode: objects (keys sorted), arrays, strings, numbers, booleans, null."""
    if v is True or v is False:
        return "!t" if v else "!f"
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "!n"
    if isinstance(v, (int, float)):
        return _number(v)
    if isinstance(v, str):
        if v == "":
            return "''"
        if _ID_RE.fullmatch(v):
            return v
        return "'" + re.sub(r"(['!])", r"!\1", v) + "'"
    if isinstance(v, (list, tuple)):
        return "!(" + ",".join(rison_encode(x) for x in v) + ")"
    if isinstance(v, dict):
        return "(" + ",".join(rison_encode(k) + ":" + rison_encode(v[k]) for k in sorted(v)) + ")"
    raise TypeError(f"rison cannot encode {type(v).__name__}")


def rison_decode(text):
    """rison.decode, with its errors as SuiteError."""
    value, i = _read(text, 0)
    if i != len(text):
        raise SuiteError(f"rison: unexpected {text[i]!r} at {i}")
    return value


def _read(s, i):
    c = s[i] if i < len(s) else ""
    if c == "!":
        c = s[i + 1:i + 2]
        if c == "(":
            return _read_seq(s, i + 2, False)
        if c and c in "tfn":
            return {"t": True, "f": False, "n": None}[c], i + 2
        raise SuiteError(f"rison: unknown literal '!{c}' at {i}")
    if c == "(":
        return _read_seq(s, i + 1, True)
    if c == "'":
        out, i = [], i + 1
        while i < len(s) and s[i] != "'":
            if s[i] == "!":
                if s[i + 1:i + 2] not in ("!", "'"):
                    raise SuiteError(f"rison: invalid string escape at {i}")
                i += 1
            out.append(s[i])
            i += 1
        if i >= len(s):
            raise SuiteError("rison: unmatched \"'\"")
        return "".join(out), i + 1
    if c and c in "-0123456789":
        m = _NUMBER_RE.match(s, i)
        text = m.group(0)
        try:
            return (float(text) if m.group(1) or m.group(2) else int(text)), m.end()
        except ValueError:
            raise SuiteError(f"rison: invalid number {text!r} at {i}") from None
    m = _ID_RE.match(s, i)
    if not m:
        raise SuiteError(f"rison: invalid character {c!r} at {i}" if c else "rison: empty expression")
    return m.group(0), m.end()


def _read_seq(s, i, is_object):
    out = {} if is_object else []
    while True:
        if i >= len(s):
            raise SuiteError("rison: unmatched '('")
        if s[i] == ")":
            return out, i + 1
        if out:
            if s[i] != ",":
                raise SuiteError(f"rison: missing ',' at {i}")
            i += 1
        value, i = _read(s, i)
        if is_object:
            if s[i:i + 1] != ":":
                raise SuiteError(f"rison: missing ':' at {i}")
            out[value], i = _read(s, i + 1)
        else:
            out.append(value)


def uri_quote(text):
    """rison.quote: encodeURIComponent, then , : @ $ / kept and a space written '+'."""
    return urllib.parse.quote(text, safe="-_.!~*'(),:@$/").replace("%20", "+")


def _unrisonify(text):
    """CE's unrisonify: decodeURIComponent (with '+' as a space), then rison.decode_object."""
    if re.search(r"%(?![0-9A-Fa-f]{2})", text):
        raise SuiteError("URI malformed")
    try:
        plain = urllib.parse.unquote(text.replace("+", "%20"), errors="strict")
    except UnicodeDecodeError:
        raise SuiteError("URI malformed") from None
    return rison_decode("(" + plain + ")")


# --- lz-string's compressToBase64 / decompressFromBase64 (pieroxy/lz-string) -------------------------
_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="
_B64_VALUE = {c: i for i, c in enumerate(_B64)}


def _units(text):
    """The JS string: one character per UTF-16 code unit."""
    raw = text.encode("utf-16-be", "surrogatepass")
    return "".join(chr(raw[i] << 8 | raw[i + 1]) for i in range(0, len(raw), 2))


def _from_units(units):
    return units.encode("utf-16-be", "surrogatepass").decode("utf-16-be", "surrogatepass")


class _Bits:
    """The bit stream: six bits to a base64 character, each code lowest bit first, and the code
    width that grows by one bit once 2**width codes of the current width have been counted."""

    def __init__(self, width, room):
        self.width, self.room, self.val, self.pos = width, room, 0, 0

    def count(self):
        self.room -= 1
        if self.room == 0:
            self.room, self.width = 1 << self.width, self.width + 1


class _Writer(_Bits):
    def __init__(self):
        super().__init__(width=2, room=2)
        self.out = []

    def put(self, value, nbits=None):
        for _ in range(self.width if nbits is None else nbits):
            self.val, value = (self.val << 1) | (value & 1), value >> 1
            self.pos += 1
            if self.pos == 6:
                self.out.append(_B64[self.val])
                self.val = self.pos = 0

    def text(self):
        self.put(0, 6 - self.pos)  # flush: lz-string always shifts at least once
        return "".join(self.out) + "=" * (-len(self.out) % 4)


class _Reader(_Bits):
    def __init__(self, data):
        super().__init__(width=3, room=4)
        self.data, self.index, self.pos = data, 1, 32
        self.val = _B64_VALUE.get(data[0], 0)

    def get(self, nbits=None):
        out = 0
        for k in range(self.width if nbits is None else nbits):
            out |= (1 << k) if self.val & self.pos else 0
            self.pos >>= 1
            if self.pos == 0:  # the next character, read as soon as this one is used up
                i, self.index, self.pos = self.index, self.index + 1, 32
                self.val = _B64_VALUE.get(self.data[i], 0) if i < len(self.data) else 0
        return out


def lz_compress_base64(text):
    """lz-string's compressToBase64: LZW over the UTF-16 code units, as base64 padded with '='."""
    out, codes, fresh, w = _Writer(), {}, set(), ""

    def emit(w):
        if w in fresh:  # a character's first use: 0 or 1 (8 or 16 bits wide), then the character
            wide = ord(w) >= 256
            out.put(int(wide))
            out.put(ord(w), 16 if wide else 8)
            out.count()
            fresh.discard(w)
        else:
            out.put(codes[w])
        out.count()

    for c in _units(text):
        if c not in codes:
            codes[c] = len(codes) + 3
            fresh.add(c)
        if w + c in codes:
            w += c
        else:
            emit(w)
            codes[w + c] = len(codes) + 3
            w = c
    if w:
        emit(w)
    out.put(2)  # end of stream
    return out.text()


def lz_decompress_base64(data):
    """lz-string's decompressFromBase64: the text; "" for a stream that does not end, None for bad codes."""
    if data == "":
        return None
    bits = _Reader(data)
    first = bits.get(2)
    if first == 3:
        raise SuiteError("lzstring: no character found")
    if first == 2:
        return ""
    w = chr(bits.get(8 if first == 0 else 16))
    words, result = ["0", "1", "2", w], [w]
    while bits.index <= len(data):
        code = bits.get()
        if code == 2:
            return _from_units("".join(result))
        if code < 2:
            words.append(chr(bits.get(8 if code == 0 else 16)))
            code = len(words) - 1
            bits.count()
        if code < len(words):
            entry = words[code]
        elif code == len(words):
            entry = w + w[0]
        else:
            return None
        result.append(entry)
        words.append(w + entry[0])
        bits.count()
        w = entry
    return ""
