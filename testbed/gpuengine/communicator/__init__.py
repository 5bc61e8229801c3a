"""Collectives between tensor-parallel ranks."""

from communicator.allreduce import Communicator

__all__ = ["Communicator"]
