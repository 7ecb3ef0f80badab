"""Reading a pane: a saved Compiler Explorer output pane, read as `compare` reads one
(transcripts.read_pasted), with the exercise's own advice.
"""

from .transcripts import read_pasted


def read_pane(path, expected):
    """(result, notes) of a saved Compiler Explorer output pane, read by the reader `compare` uses."""
    result, notes = read_pasted(path, None, None, expected)
    # exercise check takes the whole pane, not compare's --stderr / --exit-code files
    return result, [note.replace("(give --stderr FILE)", "(save the whole pane, from 'Program returned:' on)")
                    .replace("(give --exit-code N)", "(save the whole pane, from 'Program returned:' on)")
                    for note in notes]
