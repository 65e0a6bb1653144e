"""Checks of the fault campaign's SIGKILL judgement (`campaign.judge_kill_losses`) on made-up
kills, so the judgement itself can be seen to fail what it must fail. Run by `run.sh faults`
before the campaign (stdlib `unittest`; paho-mqtt must import, as for the campaign)."""

import unittest

import campaign
from campaign import Kill

MS = 1_000_000
SIGNAL = 10_000 * MS  # the kill's signal, ns


def row(device, lost, sent_ms, delivered=()):
    """A device that sent sequences 1… at `sent_ms[i]` ms, lost `lost`, delivered `delivered`."""
    return {"device": device, "lost_sequences": list(lost), "delivered": set(delivered),
            "send_times": (1, [int(t * MS) for t in sent_ms])}


def judge(rows, committed=(), unread=()):
    kill = Kill(SIGNAL, SIGNAL + 50 * MS, set(committed), set(unread))
    within, outside, *_ = campaign.judge_kill_losses(rows, [kill], window_ns=250 * MS)
    return within, outside


# Device 0 sends every 100 ms: sequence n at n * 100 ms, so 100 is the signal's moment.
TIMES = [n * 100 for n in range(1, 121)]


class KillJudgement(unittest.TestCase):
    def test_uncommitted_tail_sent_just_before_the_signal_is_within(self):
        self.assertEqual(judge([row(0, [98, 99, 100], TIMES)], committed={(0, 97)}), (3, 0))

    def test_tail_read_by_the_gateway_and_held_longer_than_the_window_fails(self):
        # 90…100 not committed and not in the socket: the gateway had read them 0.1-1 s before.
        self.assertEqual(judge([row(0, range(90, 101), TIMES)], committed={(0, 89)}), (3, 8))

    def test_tail_still_unread_in_the_notify_socket_is_within_whatever_its_age(self):
        lost = range(20, 101)  # 81 readings, more than one poller turn, sent up to 8 s before the kill
        self.assertEqual(judge([row(0, lost, TIMES)], committed={(0, 19)}, unread={(0, s) for s in lost}), (81, 0))

    def test_tail_newer_than_an_unread_reading_was_dropped_at_the_full_socket(self):
        # 20 is still in the socket; 21-100 are not: a FIFO socket gives 20 first, so they never
        # reached the gateway (the simulator dropped them, its socket full).
        self.assertEqual(judge([row(0, range(20, 101), TIMES)], committed={(0, 19)}, unread={(0, 20)}), (81, 0))

    def test_the_last_poller_turn_of_a_device_still_behind_is_within_whatever_its_age(self):
        # 85-89 were read (older than the oldest unread, 90), sent 1.1-1.5 s before the kill: with
        # 90 still unread the poller was behind, and 5 readings fit one turn (64) read just now.
        self.assertEqual(judge([row(0, range(85, 101), TIMES)], committed={(0, 84)}, unread={(0, 90)}), (16, 0))

    def test_more_read_and_uncommitted_than_one_poller_turn_fails(self):
        # 20-89 (70 readings, more than a turn of 64) read and not committed: held, not just read.
        self.assertEqual(judge([row(0, range(20, 101), TIMES)], committed={(0, 19)}, unread={(0, 90)}), (11, 70))

    def test_a_reading_the_held_socket_took_after_the_reap_is_within(self):
        # Sent 100 ms after the signal, 50 ms after the reap, into the socket the campaign still held.
        times = TIMES + [10_100]
        self.assertEqual(judge([row(0, [121], times)], committed={(0, 120)}, unread={(0, 121)}), (1, 0))

    def test_a_reading_sent_after_the_reap_and_not_held_fails(self):
        times = TIMES + [10_100]
        self.assertEqual(judge([row(0, [121], times)], committed={(0, 120)}), (0, 1))

    def test_a_committed_reading_lost_fails(self):
        self.assertEqual(judge([row(0, [99], TIMES)], committed={(0, 99), (0, 100)}), (0, 1))

    def test_a_gap_before_a_later_delivered_reading_fails_even_when_unread_came_later(self):
        # 50 lost while 51 (sent before the kill) was delivered: not the tail.
        self.assertEqual(judge([row(0, [50], TIMES, delivered={51})], unread={(0, 40)}), (0, 1))


if __name__ == "__main__":
    unittest.main()
