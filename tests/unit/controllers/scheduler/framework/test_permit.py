"""Pods held at Permit: allowed by every waiting plugin, rejected by one, or timed out."""

from __future__ import annotations

import asyncio

from dra_operator.controllers.scheduler.framework import SUCCESS, Code, Status, WaitingPods


async def test_a_pod_goes_on_once_every_waiting_plugin_allowed_it() -> None:
    waiting = WaitingPods()
    held = waiting.add("uid", {"A": 600.0, "B": 600.0})
    done = asyncio.ensure_future(waiting.wait_on_permit("uid"))
    held.allow("A")
    await asyncio.sleep(0)
    assert not done.done() and held.pending_plugins == ["B"]
    held.allow("B")
    assert await done == SUCCESS
    assert waiting.get("uid") is None


async def test_a_rejection_ends_the_wait_and_later_answers_are_ignored() -> None:
    waiting = WaitingPods()
    held = waiting.add("uid", {"A": 600.0})
    assert held.reject("A", "quota exceeded")
    assert not held.reject("A", "again")
    held.allow("A")
    assert await waiting.wait_on_permit("uid") == Status(
        Code.UNSCHEDULABLE, ("quota exceeded",), "A"
    )


async def test_a_timeout_rejects_the_pod_naming_the_plugin() -> None:
    waiting = WaitingPods()
    waiting.add("uid", {"Slow": 0.01, "Fast": 600.0})
    status = await waiting.wait_on_permit("uid")
    assert status == Status(
        Code.UNSCHEDULABLE, ("rejected due to timeout after waiting 0.01s at plugin Slow",), "Slow"
    )


async def test_a_pod_no_plugin_held_is_not_waited_for() -> None:
    assert await WaitingPods().wait_on_permit("nobody") == SUCCESS
