"""What every stage shares: input checks (`_validation`, `_suitability`), warnings issued
at the caller (`_warnings`) and progress bars (`_progress`)."""
