/** Four passages, three about ships and one not, for the knowledge bases' tests. */
export const SHIP_DOCUMENTS = [
  {
    id: "keel",
    text: "The keel is the spine of a ship, running along the bottom of the hull.",
    metadata: { topic: "hull", year: 2020 },
  },
  { id: "mast", text: "A mast holds the sails of a ship upright.", metadata: { topic: "rig", year: 2021 } },
  {
    id: "rudder",
    text: "The rudder steers the ship; a ship without a rudder drifts.",
    metadata: { topic: "hull", year: 2022 },
  },
  { id: "cake", text: "Bake the cake for forty minutes.", metadata: { topic: "kitchen" } },
];
