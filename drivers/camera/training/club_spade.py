"""Train the reader's club-against-spade check and add it to a trained reader (run in the training venv).

    .venv-train/bin/python -m drivers.camera.training.club_spade [--model PATH] [--size 48]

The reader's network tells a club from a spade worst of all, and on cards of designs it never saw it does so with a
confidence no threshold set on the validation photos catches (docs/camera.md, "Limitations"). This second, small
network reads only that: club or spade, from the black indices' crops of the reader's own training data (the same
photos, scenes and printed cards, rebuilt from its `.json` with the same seeds, without the crops of non-indices),
cut at 48 x 48 (`SIZE`): beside the 32 x 32 reader P32 it told more black indices apart (92.5% of the validation's
against 88.4% at 32), and as a veto it cost fewer sure reads; beside P48b, trained on its crops, 95.0%. `reader.py`
asks it about every index read as a club or a spade and multiplies the read's confidence by the probability it gives
that suit (`IndexReader._checked`). `calibrate.py` sets the threshold without it, so it is a veto: it can only make
a read less sure, and the threshold does not change with it. Writes `club_spade.onnx` beside the reader (`--model`,
default the shipped one) and names it in the reader's `.json` (`club_spade`, `club_spade_size`, ...:
`check.train_check`), with its validation figures; about 17 minutes on one core beside another training (11 to build
the crops).
"""

from __future__ import annotations

from drivers.camera.training.check import arguments, suit_pair, train_check

EPOCHS = 10
SIZE = 48  # the check's crops, pixels a side (a multiple of 8)


def main() -> None:
    train_check("club_spade", suit_pair("CS"), ("C", "S"), arguments(__doc__.splitlines()[0], EPOCHS, SIZE))


if __name__ == "__main__":
    main()
