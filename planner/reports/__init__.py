"""Recommendation reports: one report model (core/) rendered as PDF, XLSX, CSV and HTML.

Shared by the planning features, which build the model from their result documents.
"""
