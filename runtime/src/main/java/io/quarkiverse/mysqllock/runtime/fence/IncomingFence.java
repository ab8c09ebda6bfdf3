package io.quarkiverse.mysqllock.runtime.fence;

import jakarta.enterprise.context.RequestScoped;

import io.quarkiverse.mysqllock.LockFence;
import io.quarkus.arc.Arc;
import io.quarkus.arc.ArcContainer;

/**
 * The fence a request carries ({@value LockFence#HEADER}), read by the REST server filter, for {@code @Fenced} methods
 * to admit.
 */
@RequestScoped
public class IncomingFence {

    private LockFence fence;
    private String malformed;

    /** The request's fence, as its header says. */
    public void carried(LockFence fence) {
        this.fence = fence;
    }

    /** The request's header could not be read: what is wrong with it. */
    public void malformed(String problem) {
        this.malformed = problem;
    }

    /** The fence of the request being served on this thread; null if it carries none or no request is. */
    public static IncomingFence current() {
        ArcContainer arc = Arc.container();
        if (arc == null || !arc.requestContext().isActive()) {
            return null;
        }
        return arc.instance(IncomingFence.class).get();
    }

    public LockFence fence() {
        return fence;
    }

    public String problem() {
        return malformed;
    }
}
