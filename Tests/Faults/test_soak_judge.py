"""Checks of the soak's judgement of outbox depth and size (`soak.depth_is_flat`,
`soak.size_is_flat`) and of memory (`soak.robust_slope_per_hour`) on made-up samples, so it can be seen to fail what it must fail. Run by
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


class MemoryJudgement(unittest.TestCase):
    """RssAnon samples (kB) as the soaks of 2026-12-05 took them: a flat level with dips where a
    sample fell just after the free heap pages were given back."""

    def relative(self, values):
        return soak.robust_slope_per_hour(points(values))[1]

    def test_a_flat_level_with_dips_passes(self):
        # soak44/A1 (malloc_trim after each burst): least squares +1.09 %/h.
        values = [4216, 4440, 4468, 4428, 4428, 4224, 4468, 4428, 4428, 4428, 4308, 4428, 4428, 4428, 4428, 4280]
        self.assertLess(abs(self.relative(values)), 1)
        self.assertGreater(soak.slope_per_hour(points(values))[1], 1)

    def test_a_step_in_the_middle_fails(self):
        # soak-B (the top alone given back): +40 kB then +16 kB after a power cycle, flat otherwise.
        values = [4460] * 7 + [4500] + [4516] * 8
        self.assertGreater(self.relative(values), 1)

    def test_a_leak_of_one_and_a_half_percent_an_hour_with_dips_fails(self):
        # 4,400 kB growing 66 kB an hour (1.5 %/h), with three samples in a dip of 200 kB.
        values = [4400 + 66 * i / 60 - (200 if i in (0, 6, 12) else 0) for i in range(16)]
        self.assertGreater(self.relative(values), 1)

    def test_a_slow_growth_under_the_goal_passes(self):
        values = [4400 + 22 * i / 60 for i in range(16)]  # 0.5 %/h
        self.assertLess(self.relative(values), 1)


if __name__ == "__main__":
    unittest.main()
