"""Calls inside list, dict and generator comprehensions."""


class Job:
    def run(self):
        return 1

    def cost(self):
        return 1


def build(n):
    return Job()


def check(job):
    return True


def main():
    jobs = [build(i) for i in range(3)]
    results = [j.run() for j in jobs if check(j)]
    costs = {j: j.cost() for j in jobs}
    return results, costs, sum(j.cost() for j in jobs)
