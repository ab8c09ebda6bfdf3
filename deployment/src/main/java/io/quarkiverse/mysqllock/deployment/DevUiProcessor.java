package io.quarkiverse.mysqllock.deployment;

import io.quarkiverse.mysqllock.runtime.devui.MySqlLockJobsJsonRpcService;
import io.quarkiverse.mysqllock.runtime.devui.MySqlLockJsonRpcService;
import io.quarkus.deployment.IsLocalDevelopment;
import io.quarkus.deployment.annotations.BuildStep;
import io.quarkus.devui.spi.JsonRPCProvidersBuildItem;
import io.quarkus.devui.spi.page.CardPageBuildItem;
import io.quarkus.devui.spi.page.Page;

/** The Dev UI card (dev mode only): engine and reason, held locks, all holders, force-release of a lease. */
public class DevUiProcessor {

    @BuildStep(onlyIf = IsLocalDevelopment.class)
    CardPageBuildItem card() {
        CardPageBuildItem card = new CardPageBuildItem();
        card.addPage(Page.webComponentPageBuilder()
                .title("Distributed locks")
                .icon("font-awesome-solid:lock")
                .componentLink("qwc-mysql-lock-locks.js")
                .dynamicLabelJsonRPCMethodName("getHeldCount"));
        card.addPage(Page.webComponentPageBuilder()
                .title("Scheduled jobs")
                .icon("font-awesome-solid:clock")
                .componentLink("qwc-mysql-lock-jobs.js"));
        return card;
    }

    @BuildStep(onlyIf = IsLocalDevelopment.class)
    JsonRPCProvidersBuildItem jsonRpc() {
        return new JsonRPCProvidersBuildItem(MySqlLockJsonRpcService.class);
    }

    @BuildStep(onlyIf = IsLocalDevelopment.class)
    JsonRPCProvidersBuildItem jobsJsonRpc() {
        return new JsonRPCProvidersBuildItem(MySqlLockJobsJsonRpcService.class);
    }
}
