"""The camera driver: cards read by a camera looking down on the table (opencv-python-headless, no neural network).

- `detect`: find card outlines in a frame (anywhere, or in zones) and rectify them.
- `glyphs`: isolate the rank glyph and the suit pip in a card's corner index.
- `templates`, `enroll`: a deck's rank and suit templates, learned from photos of its cards.
- `recognize`: read rank and suit against the templates, with a confidence.
- `stability`, `frames`, `source`: `CameraSource`, the `CardSource` that turns frames into reports.
- `image_io`, `errors`: safe image reading and the driver's errors.

`data/templates.npz` are templates learned from the top-down webcam photos of `shared/data/cards/webcam-9-to-ace`
(ranks 9 to ace): `studio camera recognize` uses them unless told otherwise.
"""
