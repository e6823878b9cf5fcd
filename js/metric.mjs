// metric.mjs -- (being written: issue 8)
