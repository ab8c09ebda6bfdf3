'use strict'
// The inline macros of Quarkus' generated configuration reference (config_property_copy_button:+++name+++[]) are
// rendered by the Quarkiverse docs site's own extension; here they become nothing, so that the reference reads cleanly.
module.exports.register = function (registry) {
  registry.inlineMacro('config_property_copy_button', function () {
    this.process((parent) => this.createInline(parent, 'quoted', '', { type: 'unquoted' }))
  })
}
