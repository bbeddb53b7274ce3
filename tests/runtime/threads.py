"""Test work run in several threads at once."""

import threading


def run_threads(work, count, together=True):
    """Runs work(i) for i in range(count), each in a thread of its own, released together through a barrier
    unless `together` is false; returns the results in order. An exception in any thread fails the call
    (the first three are shown)."""
    barrier = threading.Barrier(count) if together else None
    results, errors = [None] * count, []

    def run(i):
        if barrier is not None:
            barrier.wait()
        try:
            results[i] = work(i)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    return results
