"""Tests of scripts/suitelib/celink.py, the Compiler Explorer fragment links.

The proof that Compiler Explorer opens a link is TestNodeDecodesLinks: every lesson's link is decoded
by scripts/node/decode.js, which runs the npm packages lz-string and rison (pinned by
scripts/node/package-lock.json, installed by scripts/node/install.sh) the way Compiler Explorer's
deserialiseState does. That class is skipped, with the reason, where node or the packages are missing.
The other classes need only Python: known vectors from lz-string's and Compiler Explorer's own tests,
and round trips of the Python encoder and decoder.
"""

import functools
import json
import shutil
import subprocess
import sys
import unittest
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[1]
ROOT = SCRIPTS.parent
NODE_DIR = SCRIPTS / "node"
sys.path.insert(0, str(SCRIPTS))

from suitelib import SuiteError  # noqa: E402
from suitelib import celink  # noqa: E402

LESSONS = sorted((ROOT / "lessons").glob("*.cu"))
TRICKY = {
    "quotes": "char q = '\\''; const char* s = \"it's \\\"quoted\\\"\";\n",
    "bangs": "if (!ok && x != y) { puts(\"!!wow!\"); } // !t !f !n !( '!'\n",
    "uri": "a + b % c; #define X 1 // 100% of 2+2=4 & ? # [x] {y} <z> ^ | ` ~ \\ \t\r\n",
    "rison": "(a:0,b:!(1,2),c:'x') ,:@$/* ()\n",
    "unicode": "// héllo wörld — ✓ 𝄞 😀 中文 \u00a0 \ufeff\n",
    "one char": "x",
    "empty": "",
    "digits first": "0abc -h 1e30",
    "minifier words": "row",
}


def lz_test_string(raw):
    """lz-string's test/data files are read as big-endian UTF-16 (src/node.ts loadBinaryFile)."""
    units = [raw[i] << 8 | raw[i + 1] for i in range(0, len(raw) - 1, 2)]
    return "".join(map(chr, units + ([raw[-1] << 8] if len(raw) % 2 else [])))


class TestLzStringVectors(unittest.TestCase):
    """Known results of lz-string's compressToBase64, from pieroxy/lz-string test/data/*/base64.bin."""
    VECTORS = [
        (b"", "Q==="),
        (b"Hello world", "qYShsbQE9o9u6DZOgAJkA==="),
        (bytes(range(0x20, 0x7F)),
         "oQEmIiSkJI5GSJQUjUVItDSHo6QjAyGYmQrCyHY2QnByG4uQvDyD8fIIICgwkKCiIoOJigkhKDSUoLIyg8nKCKCo"
         "MpKgqiqDqaoJoag2lqC6OoH09QIYGgYyNApiaBzM0CWFoGsrQLY2geztAjg6BnJ0CuLoHc3QJ4egby9Avj6AAPyA"),
        (b"a" * 128 + b"b" * 128 + b"c" * 128 + b"d" * 128,
         "oaGNfGV09hGRgxTktW9H2GNjHu/4MKOJOMBMTCyq6m2u+h+oA==="),
    ]

    def test_compress_matches_lz_string(self):
        for raw, expected in self.VECTORS:
            with self.subTest(raw=raw[:16]):
                self.assertEqual(celink.lz_compress_base64(lz_test_string(raw)), expected)

    def test_decompress_matches_lz_string(self):
        for raw, expected in self.VECTORS:
            with self.subTest(raw=raw[:16]):
                self.assertEqual(celink.lz_decompress_base64(expected), lz_test_string(raw))

    def test_edge_cases(self):
        self.assertIsNone(celink.lz_decompress_base64(""))
        self.assertEqual(celink.lz_decompress_base64("AAAA"), "")  # a stream with no end mark


class TestLzStringRoundTrip(unittest.TestCase):
    def test_tricky_and_lesson_text(self):
        texts = list(TRICKY.values()) + ["\ud800 a lone surrogate", "ab" * 5000]
        texts += [p.read_text(encoding="utf-8") for p in LESSONS]
        for text in texts:
            with self.subTest(text=text[:30]):
                packed = celink.lz_compress_base64(text)
                self.assertRegex(packed, r"^[A-Za-z0-9+/]*=*$")
                self.assertEqual(len(packed) % 4, 0)
                self.assertEqual(celink.lz_decompress_base64(packed), text)


class TestRison(unittest.TestCase):
    """Compiler Explorer's test/rison.ts cases (from Nanonid/rison's python tests)."""
    BOTH_WAYS = {
        "(a:0,b:1)": {"a": 0, "b": 1}, "(a:0,b:foo,c:'23skidoo')": {"a": 0, "c": "23skidoo", "b": "foo"},
        "!t": True, "!f": False, "!n": None, "''": "", "0": 0, "1.5": 1.5, "-3": -3, "1e30": 1e30,
        "1e-30": 1.0000000000000001e-30, "G.": "G.", "a": "a", "'0a'": "0a", "'abc def'": "abc def",
        "()": {}, "(a:0)": {"a": 0},
        "(id:!n,type:/common/document)": {"type": "/common/document", "id": None},
        "!()": [], "!(!t,!f,!n,'')": [True, False, None, ""], "'-h'": "-h", "a-z": "a-z",
        "'wow!!'": "wow!", "domain.com": "domain.com", "'user@domain.com'": "user@domain.com",
        "'US $10'": "US $10", "'can!'t'": "can't",
    }
    ENCODE = {"can't": "'can!'t'", '"can\'t"': "'\"can!'t\"'", "'can't'": "'!'can!'t!''"}

    def test_decode(self):
        for text, value in self.BOTH_WAYS.items():
            with self.subTest(text=text):
                self.assertEqual(celink.rison_decode(text), value)

    def test_encode(self):
        for text, value in list(self.BOTH_WAYS.items()) + [(r, v) for v, r in self.ENCODE.items()]:
            with self.subTest(text=text):
                self.assertEqual(celink.rison_encode(value), text)

    def test_numbers_as_javascript_writes_them(self):
        for value, text in [(1e16, "10000000000000000"), (1e-5, "0.00001"), (1e-7, "1e-7"), (-2.5, "-2.5")]:
            self.assertEqual(celink.rison_encode(value), text)

    def test_errors_are_one_line(self):
        for bad in ["(a:0", "'open", "!x", "(a)", "!(1 2)", "*"]:
            with self.subTest(bad=bad), self.assertRaises(SuiteError):
                celink.rison_decode(bad)

    def test_uri_quote_is_rison_quote(self):
        self.assertEqual(celink.uri_quote("a b+c=d'!(),:@$/~*%"), "a+b%2Bc%3Dd'!(),:@$/~*%25")
        self.assertEqual(celink.uri_quote("é\n#"), "%C3%A9%0A%23")


class TestCompilerExplorerHashes(unittest.TestCase):
    """Hashes written by Compiler Explorer itself (its static/tests/url-tests.ts): we decode them as it
    does, and re-encoding the decoded state gives back CE's own text, byte for byte."""
    UNCOMPRESSED = (
        "g:!((g:!((g:!((h:codeEditor,i:(filename:%271%27,fontScale:14,fontUsePx:%270%27,j:1,lang:c%2B%2B,"
        "source:%27//+Type+your+code+here,+or+load+an+example.%0Aint+square(int+num)+%7B%0A++++return+num+*+"
        "num%3B%0A%7D%27),l:%275%27,n:%270%27,o:%27C%2B%2B+source+%231%27,t:%270%27)),k:50,"
        "l:%274%27,n:%270%27,"
        "o:%27%27,s:0,t:%270%27),(g:!((h:compiler,i:(compiler:g152,filters:(b:%270%27,binary:%271%27,"
        "binaryObject:%271%27,commentOnly:%270%27,debugCalls:%271%27,demangle:%270%27,directives:%270%27,"
        "execute:%271%27,intel:%270%27,libraryCode:%270%27,trim:%271%27,verboseDemangling:%270%27),"
        "flagsViewOpen:%271%27,fontScale:14,fontUsePx:%270%27,j:1,lang:c%2B%2B,libs:!(),options:%27%27,"
        "overrides:!(),selection:(endColumn:1,endLineNumber:1,positionColumn:1,positionLineNumber:1,"
        "selectionStartColumn:1,selectionStartLineNumber:1,startColumn:1,startLineNumber:1),source:1),"
        "l:%275%27,n:%270%27,o:%27+x86-64+gcc+15.2+(Editor+%231)%27,t:%270%27)),k:50,l:%274%27,n:%270%27,"
        "o:%27%27,s:0,t:%270%27)),l:%272%27,n:%270%27,o:%27%27,t:%270%27)),version:4")
    COMPRESSED = (
        "z:OYLghAFBqd5TKALEBjA9gEwKYFFMCWALugE4A0BIEAZgQDbYB2AhgLbYgDkAjF%2BTXRMiAZVQtGIHgBYBQogFUAztgAK"
        "AD24AGfgCsp5eiyahUAUgBMAIUtXyKxqiIEh1ZpgDC6egFc2TEAtZdwAZAiZsADk/ACNsUgMAB3QlYhcmL19/QNlk1OchMI"
        "jotjiEnntsRwKmESIWUiJMvwCgyur0uoaiIqjY%2BIMlesbm7Lah7t6SsqkASnt0H1JUTi4AejWAahiWTGB47d390kO9%2BK"
        "55%2Bm4AVn4Arh1ydG4PW1tNpUXl7E3LAGY%2BOQiNoLvMANYga5aQzcaT8NiQ6H3R7PLj8JQgaHAh4XchwWAoCaoME%2BJQ"
        "sfaUagYNiJBjxSLsVbqAAcADYALSs6SbYCoVCbHjXAB0Fn42EIJFIBEwBkEwjEEk4MjkwmUak0OPI%2BgqDmwTnSbiYnm8LQ"
        "MoXCfVKAwqeTSQlGARtKTtTCm/XK7T1NS6IxN2R1VS9nWGPQt02t9hDDsGIbdVvK8yIpGw2GlmMuNzuIKe3C6xM2ynJPwAag"
        "RsAB3A4sjlcnl8gXCiybCD4YhkX4WAHkTZeGl0k7/HizfjYnSzeZIbC7AYQDNcOHkBFQ8jI/io9GYoEg8fkCHLq5cP5ZzXrrc"
        "4%2Bb4hDwCAoam0xgUKgQO/9kDAQUWAQMIjxDEQGLZjE4QNAAntwgJAawpAgQA8jEuheuB/DUhwwgwUw9BgZqOAxD4wAeBI9"
        "AYrw/A4GwxjAJI2EEMm%2BoAG7YMRjzYOoeo%2BD%2BSGUMIVTZvQBAxKQoFeDg2ZJgQCIkeQDGkDEKTYAAItg5EmHxJjbgIR"
        "jAEopYVjBiTMJxcqiOIkjKkZaoaNm2qGBRaBvNYhj8RikDzOgiQ1MR7IwaKTzSVKODObOnr6q4EDuNG0isuQ5rFO6STOjUEV"
        "RbaNRxjMAYdEIPpNH6ASRcF3qxmGcU6lGuUgPlEyNGl1rzJ8SwrHMMJcLcK7ZqimzVpy3K8vygois2raSh2ALDmeY7goizUL"
        "kuSLtdwG5Yupl43iAiSJJSz5GCY7KCKQ5HYoC4ptv5srfvE7KTtOpBMfwRkKqZsjmSolmatZSYpmmWhzq1q45lwqjJokpDoC"
        "sSifCcMHsYk7GdWy3V1n1jaDRK7aDt2vb3gcg5jaOoLkFdOAJEFB4zVNf2nhiS3npN%2B7cEebUngt434wePkU8zeM7tJqSu"
        "NIQA%3D%3D")

    @staticmethod
    def components(node):
        if isinstance(node, dict):
            if "componentName" in node:
                yield node
            node = node.get("content", [])
        for child in node if isinstance(node, list) else []:
            yield from TestCompilerExplorerHashes.components(child)

    def test_uncompressed_hash(self):
        state = celink.ce_decode("https://godbolt.org/#" + self.UNCOMPRESSED)
        panes = {p["componentName"]: p["componentState"] for p in self.components(state)}
        self.assertIn("square", panes["codeEditor"]["source"])
        self.assertEqual(panes["compiler"]["compiler"], "g152")
        self.assertIs(panes["compiler"]["filters"]["execute"], False)
        again = celink.uri_quote(celink.rison_encode(celink.minify(state))[1:-1])
        self.assertEqual(again, self.UNCOMPRESSED.replace("%27", "'"))  # CE writes ' bare; a browser %27

    def test_compressed_hash(self):
        state = celink.ce_decode("https://godbolt.org/#" + self.COMPRESSED)
        names = [p["componentName"] for p in self.components(state)]
        self.assertTrue({"codeEditor", "compiler", "pp", "stackusage"} <= set(names), names)
        panes = {p["componentName"]: p["componentState"] for p in self.components(state)}
        self.assertIn("badger", panes["codeEditor"]["source"])
        self.assertEqual(panes["compiler"]["compiler"], "g152")
        inner = celink.uri_quote(celink.rison_encode(celink.minify(state))[1:-1])
        self.assertEqual(celink.uri_quote("z:" + celink.rison_encode(celink.lz_compress_base64(inner))),
                         self.COMPRESSED)


@functools.lru_cache(maxsize=None)
def lesson_links():
    """{name: (source, link)} for every lesson and every tricky text."""
    texts = {p.name: p.read_text(encoding="utf-8") for p in LESSONS}
    texts.update(TRICKY)
    return {name: (text, celink.ce_link(text)) for name, text in texts.items()}


class TestLinkShape(unittest.TestCase):
    def test_every_lesson_is_covered(self):
        self.assertGreaterEqual(len(LESSONS), 1, "no lessons/*.cu found")

    def test_fragment_form(self):
        for name, (_, link) in lesson_links().items():
            with self.subTest(name=name):
                self.assertRegex(link, r"^https://godbolt\.org/#z:'?([A-Za-z0-9/]|%2B)*(%3D)*'?$")

    def test_state_settings(self):
        state = celink.ce_state("int main() {}")
        row = state["content"][0]
        self.assertEqual((state["version"], row["type"]), (4, "row"))
        panes = {p["componentName"]: p["componentState"] for p in row["content"]}
        self.assertEqual(panes["codeEditor"], {"id": 1, "source": "int main() {}", "lang": "cuda"})
        for name in ("compiler", "executor"):
            self.assertEqual(panes[name]["compiler"], "nvcc130")
            self.assertEqual(panes[name]["options"], "-std=c++17 -O3 -arch=sm_75")
            self.assertEqual((panes[name]["lang"], panes[name]["source"]), ("cuda", 1))


class TestPythonRoundTrip(unittest.TestCase):
    def test_decode_gives_back_source_and_settings(self):
        for name, (text, link) in lesson_links().items():
            with self.subTest(name=name):
                self.assertEqual(celink.ce_decode(link), celink.ce_state(text))

    def test_bad_links_are_one_line_errors(self):
        good = lesson_links()["one char"][1]
        bad_links = ["https://godbolt.org/", good[:-12], good.replace("#z:", "#z:%zz"),
                     "https://godbolt.org/#(z"]
        for bad in bad_links:
            with self.subTest(bad=bad[-20:]), self.assertRaises(SuiteError):
                celink.ce_decode(bad)


def node_missing():
    if not shutil.which("node"):
        return "node is not on PATH"
    for package in ("lz-string", "rison"):
        if not (NODE_DIR / "node_modules" / package / "package.json").is_file():
            return f"scripts/node/node_modules/{package} is missing (run scripts/node/install.sh)"
    return None


@unittest.skipIf(node_missing(), f"Compiler Explorer decoding with node not checked: {node_missing()}")
class TestNodeDecodesLinks(unittest.TestCase):
    """Each link, decoded by the npm lz-string and rison packages as CE's deserialiseState does,
    gives back exactly the lesson's source and the settings."""

    def decode_with_node(self, links):
        run = subprocess.run(["node", str(NODE_DIR / "decode.js")], input="\n".join(links),
                             capture_output=True, text=True, encoding="utf-8", timeout=120)
        self.assertEqual(run.returncode, 0, run.stdout[-500:] + run.stderr[-500:])
        return [json.loads(line) for line in run.stdout.splitlines()]

    def test_every_lesson_link(self):
        items = list(lesson_links().items())
        states = self.decode_with_node([link for _, (_, link) in items])
        self.assertEqual(len(states), len(items))
        for (name, (text, _)), state in zip(items, states):
            with self.subTest(name=name):
                self.assertEqual(state, celink.ce_state(text))
                panes = {p["componentName"]: p["componentState"] for p in state["content"][0]["content"]}
                self.assertEqual(panes["codeEditor"]["source"], text)
                self.assertEqual(panes["codeEditor"]["lang"], "cuda")
                self.assertIn("executor", panes)
                for pane in ("compiler", "executor"):
                    self.assertEqual(panes[pane]["compiler"], "nvcc130")
                    self.assertEqual(panes[pane]["options"], "-std=c++17 -O3 -arch=sm_75")

    def test_corrupt_link_fails_in_node_too(self):
        link = lesson_links()["one char"][1]
        run = subprocess.run(["node", str(NODE_DIR / "decode.js"), link[:-12]],
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(run.returncode, 1)
        self.assertIn("error", json.loads(run.stdout))


if __name__ == "__main__":
    unittest.main()
