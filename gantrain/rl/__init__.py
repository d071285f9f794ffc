"""Reinforcement learning pieces for the actor-critic task: numpy environments and rollouts."""
