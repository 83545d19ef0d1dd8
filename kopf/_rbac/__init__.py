"""(listed below)"""
