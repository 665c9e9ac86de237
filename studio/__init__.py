"""The studio: its domain (`studio.domain`: pure rules, procedure, events and records), the ports its services need
(`ports`: event store, clock, publisher; `sources`: card sources) and the services that do I/O (stores, the table
service, the supervisor, settings, wallets, betting, users, chat).

Dependencies point inwards: services and ports may import the domain; the domain imports nothing but the standard
library and itself.
"""
