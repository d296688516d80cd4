import optuna

optuna.logging.set_verbosity(optuna.logging.WARNING)
