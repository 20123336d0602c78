"""Sensor definitions (config) and the sensor models that turn the simulated world into readings."""
