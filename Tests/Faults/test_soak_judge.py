"""Checks of the soak's judgement of outbox depth and size (`soak.depth_is_flat`,
`soak.size_is_flat`) on made-up samples, so it can be seen to fail what it must fail. Run by
`run.sh soak` before the soak (stdlib `unittest`)."""

import unittest

import soak


def points(values):
    return [(5 + i, v) for i, v in enumerate(values)]


class DepthJudgement(unittest.TestCase):
    def test_depth_hovering_near_the_floor_passes(self):
        self.assertTrue(soak.depth_is_flat(points([7, 5, 7, 9, 6, 3, 8, 2, 9, 11, 1, 4, 5, 5, 8, 4]), 100))

    def test_rows_never_deleted_fail(self):
        self.assertFalse(soak.depth_is_flat(points([5, 300, 600, 900, 1200, 1500]), 100))

    def test_a_slow_leak_under_the_bound_in_each_sample_fails_when_the_late_half_climbs(self):
        self.assertFalse(soak.depth_is_flat(points([1, 2, 3, 2, 95, 99, 98, 100]), 40))


class SizeJudgement(unittest.TestCase):
    def test_a_page_more_at_one_moment_passes(self):
        self.assertTrue(soak.size_is_flat(points([1236992] * 10 + [1240096] + [1236992] * 5)))

    def test_a_file_growing_with_the_readings_fails(self):
        self.assertFalse(soak.size_is_flat(points([1236992 + 200_000 * i for i in range(16)])))


if __name__ == "__main__":
    unittest.main()
