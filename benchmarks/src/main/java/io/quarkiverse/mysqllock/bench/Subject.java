package io.quarkiverse.mysqllock.bench;

/** One lock implementation under measurement: a worker per thread, each cycling acquire + release of its lock. */
interface Subject extends AutoCloseable {

    String name();

    /** A worker for one thread; {@code lockName} is that thread's own lock (distinct names: uncontended). */
    Worker worker(String lockName) throws Exception;

    @Override
    default void close() throws Exception {
    }

    interface Worker extends AutoCloseable {

        /** Acquires the lock (failing if it is not granted at once) and releases it. */
        void cycle() throws Exception;

        @Override
        default void close() throws Exception {
        }
    }
}
