/* Let the ipywidgets 8 widget manager typeset labels with MathJax 3.
 *
 * @jupyter-widgets/html-manager 1.0 typesets widget descriptions with the MathJax 2 API,
 * MathJax.Hub.Queue(["Typeset", MathJax.Hub, element]), whenever window.MathJax exists. The book
 * loads MathJax 3, which has no Hub, so rendering a widget threw "Cannot read properties of
 * undefined (reading 'Queue')". This file is loaded before the widget manager; on window "load"
 * (its handler runs before the manager's, which renders the widgets) it gives MathJax 3 a Hub.Queue
 * that forwards "Typeset" commands to MathJax 3's typesetPromise. Part of the neurips26_book extension.
 */
(function () {
  "use strict";
  function typeset(element) {
    var mj = window.MathJax;
    var ready = mj.startup && mj.startup.promise ? mj.startup.promise : Promise.resolve();
    ready
      .then(function () {
        if (typeof mj.typesetPromise === "function") {
          return mj.typesetPromise(element ? [element] : undefined);
        }
      })
      .catch(function (err) {
        console.warn("MathJax could not typeset a widget label:", err);
      });
  }
  function installHub() {
    var mj = window.MathJax;
    if (!mj || mj.Hub) {
      return; // no MathJax on this page, or MathJax 2, which has its own Hub
    }
    mj.Hub = {
      Queue: function () {
        for (var i = 0; i < arguments.length; i++) {
          var command = arguments[i];
          if (Array.isArray(command) && command[0] === "Typeset") {
            typeset(command[2]);
          }
        }
      },
    };
  }
  window.addEventListener("load", installHub);
})();
