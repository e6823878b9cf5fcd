// loss.mjs -- (being written: issue 8)
