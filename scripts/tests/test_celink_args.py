"""Tests of the optional execution arguments of a Compiler Explorer link (celink.ce_link exec_args).

Compiler Explorer's executor pane keeps its arguments in its component state as `execArgs` (a string;
static/panes/executor.interfaces.ts) and sends them as executeParameters.args (static/panes/executor.ts);
`argsPanelShown` opens the field that shows them. A link without arguments is unchanged."""

import unittest

from helpers import SCRIPTS  # noqa: F401  (puts scripts/ on sys.path)
from suitelib import celink


def executor(state):
    row = state["content"][0]["content"]
    return next(p["componentState"] for p in row if p["componentName"] == "executor")


class TestLinkArguments(unittest.TestCase):
    SOURCE = "int main(int argc, char** argv) { return argc; }\n"

    def test_arguments_round_trip_in_the_executor_state(self):
        for args in ("-m 1 -n 1 -k 1", "-m abc", "-tile 32 -bs 256", "'a b' -x"):
            with self.subTest(args=args):
                state = celink.ce_decode(celink.ce_link(self.SOURCE, args))
                self.assertEqual(executor(state)["execArgs"], args)
                self.assertIs(executor(state)["argsPanelShown"], True)
                self.assertEqual(state, celink.ce_state(self.SOURCE, args))

    def test_no_arguments_is_the_plain_link(self):
        self.assertEqual(celink.ce_link(self.SOURCE), celink.ce_link(self.SOURCE, None))
        self.assertEqual(celink.ce_link(self.SOURCE), celink.ce_link(self.SOURCE, ""))
        self.assertNotIn("execArgs", executor(celink.ce_decode(celink.ce_link(self.SOURCE))))

    def test_only_the_executor_carries_them(self):
        state = celink.ce_state(self.SOURCE, "-n 4096")
        row = state["content"][0]["content"]
        for pane in row:
            if pane["componentName"] != "executor":
                self.assertNotIn("execArgs", pane["componentState"])


if __name__ == "__main__":
    unittest.main()
