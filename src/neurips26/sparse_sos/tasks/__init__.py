"""The chapter's six tasks, one module each: a chain quartic (:mod:`.chain_quartic`), ..."""
