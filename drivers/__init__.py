"""Device drivers: smart shoe, line scanner, camera and simulator, each a `CardSource`."""
