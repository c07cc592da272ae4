"""The tenant knowledge base: documents and rules shared by every user of a tenant."""
