package io.quarkiverse.mysqllock.runtime.jobs;

/**
 * A job's bookkeeping on a thread that may be interrupted (a lock wait ended by an interrupt keeps the thread's
 * interrupt): the claim given back and the history written with the interrupt set aside, and set again after, so that
 * they reach the database and the caller still sees the interrupt.
 */
final class Uninterrupted {

    private Uninterrupted() {
    }

    static void run(Runnable work) {
        boolean interrupted = Thread.interrupted();
        try {
            work.run();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
