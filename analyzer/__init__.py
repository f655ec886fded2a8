"""The analyzer: align parsed sources on one timeline and run the findings rules. No Django here."""
