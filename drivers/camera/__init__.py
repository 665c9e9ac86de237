"""The camera driver: cards read by a camera looking down on the table (OpenCV, NumPy and ONNX Runtime).

- `indices`, `squares`, `reader`: the shipped reader. Corner indices proposed from the frame's ink (and from the
  corners of whole card outlines), read by a small network (`data/index_net.onnx`, run by ONNX Runtime; trained by
  `training/`), grouped into cards: all 52 cards, no enrollment. `CameraSource` and `studio camera` use it by
  default.
- `detect`, `glyphs`, `recognize`: the template recognizer: card outlines found and rectified, index glyphs matched
  against a deck's templates; with an enrolled deck it confirms or overrides the shipped reader.
- `templates`, `enroll`: a deck's rank and suit templates, learned from photos of its cards.
- `stability`, `frames`, `source`: `CameraSource`, the `CardSource` that turns frames into reports.
- `image_io`, `errors`: safe image reading and the driver's errors.
- `training/`: how the shipped network was made (split, data set, training, calibration); training runs in its own
  venv (`scripts/train-camera`), never at runtime.

`data/templates.npz` are templates learned from the top-down webcam photos of `shared/data/cards/webcam-9-to-ace`
(ranks 9 to ace), kept as an example of an enrolled deck (`--templates`).
"""
