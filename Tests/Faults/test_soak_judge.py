"""Checks of the soak's judgement of outbox depth and size (`soak.depth_is_flat`,
`soak.size_is_flat`) and of memory (`soak.robust_slope_per_hour`, `soak.memory_is_flat`) on made-up and real samples, so it can be seen to fail what it must fail. Run by
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

    def test_dips_at_the_end_lean_the_slope_down_and_pass(self):
        # soak48 (2026-12-05, the real minutes): flat, then three of the last five samples just
        # after a release. The median slope is -1.80 %/h, which failed the two-sided judgement.
        samples = [(5.01, 4476), (6.43, 4476), (7.31, 4540), (8.29, 4548), (9.47, 4548), (10.50, 4472),
                   (11.52, 4544), (12.00, 4544), (13.28, 4524), (14.48, 4536), (15.50, 4316), (16.51, 4544),
                   (17.50, 4364), (18.50, 4524), (19.51, 4364), (20.00, 4524)]
        _, relative, flat = soak.memory_is_flat(samples)
        self.assertLess(relative, -1)
        self.assertTrue(flat)

    def test_growth_over_the_goal_fails_the_judgement(self):
        values = [4400 + 66 * i / 60 - (200 if i in (0, 6, 12) else 0) for i in range(16)]  # 1.5 %/h
        self.assertFalse(soak.memory_is_flat(points(values))[2])
        self.assertTrue(soak.memory_is_flat(points([4400 + 22 * i / 60 for i in range(16)]))[2])


if __name__ == "__main__":
    unittest.main()
