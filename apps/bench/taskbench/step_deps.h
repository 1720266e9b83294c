/* step_deps.h: what the points of a Task Bench step read, shared by the Tessera backend
 * (tessera_main.cc) and the raw-StarPU floor (floor_main.cc), so that the two order exactly the
 * same dependences. Task Bench's core only: no Tessera, no StarPU. */
#ifndef TASKBENCH_STEP_DEPS_H
#define TASKBENCH_STEP_DEPS_H

#include <utility>
#include <vector>

#include "core.h"

/* The dependencies of every point at one kind of step, clipped to the points step t-1 computed,
 * in the order execute_point expects them: point x reads deps[first[x]] .. deps[first[x+1]-1].
 * Steps with the same dependence set and the same previous offset and width are of one kind
 * (stencil_1d and nearest: a single kind). */
struct StepDeps {
	long dset;
	long last_offset;
	long last_width;
	std::vector<long> first;
	std::vector<long> deps;
};

/* Whether step t of g is of the kind s describes. */
static inline bool step_deps_match(const StepDeps &s, const TaskGraph &g, long t)
{
	return s.dset == g.dependence_set_at_timestep(t) &&
	       s.last_offset == g.offset_at_timestep(t - 1) &&
	       s.last_width == g.width_at_timestep(t - 1);
}

/* s describes step t of g. */
static inline void step_deps_init(StepDeps *s, const TaskGraph &g, long t)
{
	s->dset = g.dependence_set_at_timestep(t);
	s->last_offset = g.offset_at_timestep(t - 1);
	s->last_width = g.width_at_timestep(t - 1);
	s->first.clear();
	s->deps.clear();
	for (long x = 0; x < g.max_width; x++) {
		s->first.push_back((long)s->deps.size());
		for (std::pair<long, long> span : g.dependencies(s->dset, x))
			for (long d = span.first; d <= span.second; d++)
				if (d >= s->last_offset && d < s->last_offset + s->last_width)
					s->deps.push_back(d);
	}
	s->first.push_back((long)s->deps.size());
}

#endif
