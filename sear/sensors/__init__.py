"""The sensor types: each one module (definition, model, presentation), listed in `registry`; `config` has
what all definitions share and the sensors file; `suite` samples a run's sensors; `raycast` casts their rays."""
