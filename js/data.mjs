// data.mjs -- (being written: issue 8)
