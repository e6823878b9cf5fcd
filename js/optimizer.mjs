// optimizer.mjs -- (being written: issue 8)
