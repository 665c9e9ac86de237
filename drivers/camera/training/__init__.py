"""Training of the shipped corner-index reader (`drivers/camera/data/index_net.onnx`).

Run in the separate training venv (`scripts/train-camera`); nothing here is imported by the studio at runtime, and
torch is imported only inside the functions that need it."""
