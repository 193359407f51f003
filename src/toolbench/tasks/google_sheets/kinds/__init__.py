"""The request kinds of the google_sheets generator, one module per family.

A kind is a function of a ``random.Random`` that returns one record (request, gold programs,
question sheet, format check, slots); ``generator.SCHEDULE`` says how many of each make the test
set."""
