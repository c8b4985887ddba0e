"""ipywidgets views over gpunb's plain state and events, each with a readable text form."""
