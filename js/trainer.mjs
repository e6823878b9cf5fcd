// trainer.mjs -- (being written: issue 8)
