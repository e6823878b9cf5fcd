// lr_scheduler.mjs -- (being written: issue 8)
