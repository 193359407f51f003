"""google_sheets: gspread/pandas programs run against an in-memory spreadsheet (emulator so far)."""
